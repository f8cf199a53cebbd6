#!/usr/bin/env python3
"""The Q2 parity reference (tests/bench/README.md): runs Lipizzaner's own non-distributed 1x1
(lipizzaner.Lipizzaner().run(n), as its main.py `train` without --distributed does) in-process,
offline, on one CPU thread. Saves 10k generator samples at chosen generations
and logs seconds per generation. Nothing of the training loop is replaced: the only hook wraps the trainer's
per-generation log_results() call (end of each generation) to time it and to take snapshots, and the
snapshot sampling uses a private torch.Generator so the training RNG stream is untouched.
"""
import os
for v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
    os.environ[v] = '1'
import argparse, json, sys, time

ap = argparse.ArgumentParser()
ap.add_argument('--src', default='/tmp/lipizzaner/src')
ap.add_argument('--config', default='/tmp/lipizzaner/conf/mnist-1x1-offline.yml')
ap.add_argument('--seed', type=int, default=1)
ap.add_argument('--generations', type=int, default=200)
ap.add_argument('--snapshots', default='100,200')
ap.add_argument('--samples', type=int, default=10000)
ap.add_argument('--out', default='/tmp/lipizzaner/out')
ap.add_argument('--rundir', default=None, help='per-run dir for Lipizzaner images/logs (default out/run-seedN)')
ap.add_argument('--no-score', action='store_true',
                help='disable Lipizzaner\'s own per-generation FID (changes only the random stream)')
ap.add_argument('--log-level', default=None, help='override general.logging.log_level')
ap.add_argument('--torch-initial-seed', type=int, default=None,
                help='seed torch\'s default generator at process start, before Lipizzaner builds its networks. '
                     'Debian\'s torch 1.13 starts each process from a random seed; upstream PyTorch starts from '
                     '67280421310721, so pass that to get what Lipizzaner does on upstream torch (the same G0/D0 '
                     'for every config seed)')
a = ap.parse_args()

cfg_path, out = os.path.abspath(a.config), os.path.abspath(a.out)
rundir = os.path.abspath(a.rundir or os.path.join(out, f'run-seed{a.seed}'))
os.makedirs(out, exist_ok=True); os.makedirs(rundir, exist_ok=True)
sys.path.insert(0, a.src)
os.chdir(a.src)   # FID loads ./output/networks/mnist_cnn.pkl relative to src/

import numpy as np
import torch
import yaml
torch.set_num_threads(1)
torch.set_num_interop_threads(1)
if a.torch_initial_seed is not None:
    torch.manual_seed(a.torch_initial_seed)
print('# torch.initial_seed() at start: %d' % torch.initial_seed(), file=sys.__stdout__, flush=True)

from helpers.configuration_container import ConfigurationContainer
from helpers.yaml_include_loader import YamlIncludeLoader
from helpers.log_helper import LogHelper
from distribution.client_environment import ClientEnvironment
from distribution.concurrent_populations import ConcurrentPopulations
from lipizzaner import Lipizzaner

# --- what main.py's initialize_settings() does, with the seed/generations from the command line
cc = ConfigurationContainer.instance()
with open(cfg_path) as f:
    cc.settings = yaml.load(f, YamlIncludeLoader)
cc.settings['general']['seed'] = a.seed
cc.settings['trainer']['n_iterations'] = a.generations
if a.no_score:
    cc.settings['trainer']['params']['score']['enabled'] = False
if a.log_level:
    cc.settings['general']['logging']['log_level'] = a.log_level
cc.output_dir = rundir          # images (fake_images-N.jpg) and generator.pkl go here, not into the shared dir
if cc.settings['general']['logging']['enabled']:
    LogHelper.setup(cc.settings['general']['logging']['log_level'], os.path.join(rundir, 'log'))

ClientEnvironment.port = 0      # matches client_nodes [{127.0.0.1, 0}] -> 1x1 grid, this host is the cell
# LipizzanerGANTrainer.__init__ calls concurrent_populations.unlock() (lipizzaner_gan_trainer.py:59); in the
# non-distributed path nobody locked it before, and releasing an unlocked threading.Lock raises RuntimeError.
ConcurrentPopulations.instance().lock()

snaps = sorted({int(s) for s in a.snapshots.split(',') if s})
times = []
state = {'t': None}

lip = Lipizzaner()              # builds dataloader, factory, trainer (networks), THEN seeds (lipizzaner.py:44-65)
trainer = lip.trainer
orig_log_results = trainer.log_results


def hooked_log_results(batch_size, iteration, *args, **kw):
    r = orig_log_results(batch_size, iteration, *args, **kw)
    now = time.time()
    g = iteration + 1
    times.append(now - state['t'])
    gen = trainer.population_gen.individuals[0]
    dis = trainer.population_dis.individuals[0]
    print(json.dumps({'seed': a.seed, 'gen': g, 'sec': round(now - state['t'], 3),
                      'lip_fid_1k': (float(trainer.score) if trainer.score_calc is not None else None),
                      'f_G': float(gen.fitness), 'f_D': float(dis.fitness),
                      'lr_G_attr': gen.learning_rate, 'lr_D_attr': dis.learning_rate,
                      'lr_G_adam': (gen.optimizer_state['param_groups'][0]['lr'] if gen.optimizer_state else None),
                      'lr_D_adam': (dis.optimizer_state['param_groups'][0]['lr'] if dis.optimizer_state else None)}),
          file=sys.__stdout__, flush=True)
    if g in snaps:
        net = gen.genome.net
        was_training = net.training
        net.eval()
        zg = torch.Generator().manual_seed(1000003 * a.seed + g)   # private stream
        with torch.no_grad():
            x = net(torch.randn(a.samples, 64, generator=zg)).reshape(a.samples, -1)
        if was_training:
            net.train()
        x = np.ascontiguousarray(x.numpy().astype(np.float32))
        assert x.shape == (a.samples, 784) and np.all(np.abs(x) <= 1), (x.shape, np.abs(x).max())
        np.save(os.path.join(out, f'seed{a.seed}-gen{g}.npy'), x)
        torch.save(net.state_dict(), os.path.join(out, f'seed{a.seed}-gen{g}-generator.pkl'))
        torch.save(dis.genome.net.state_dict(), os.path.join(out, f'seed{a.seed}-gen{g}-discriminator.pkl'))
        print(f'# saved {out}/seed{a.seed}-gen{g}.npy', file=sys.__stdout__, flush=True)
        now = time.time()       # snapshot time is not counted in the next generation
    state['t'] = now
    return r


trainer.log_results = hooked_log_results
t0 = time.time()
state['t'] = t0
lip.run(a.generations)          # trainer.train(n_iterations) + saves generator.pkl/discriminator.pkl in rundir
total = time.time() - t0
summary = {'seed': a.seed, 'generations': a.generations, 'total_sec': round(total, 1),
           'mean_sec_per_gen': round(float(np.mean(times)), 3),
           'median_sec_per_gen': round(float(np.median(times)), 3),
           'score_enabled': trainer.score_calc is not None,
           'torch': torch.__version__, 'threads': torch.get_num_threads()}
with open(os.path.join(out, f'seed{a.seed}-times.json'), 'w') as f:
    json.dump({'summary': summary, 'sec_per_gen': times}, f)
print('# SUMMARY ' + json.dumps(summary), file=sys.__stdout__, flush=True)
