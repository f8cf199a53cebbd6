#!/usr/bin/env python3
"""How fast the MLP cells' training steps can run on one GPU when P cells are
stacked along a leading member dimension (one batched kernel per layer), against
the same cells stepped one after another as separate modules.

A probe for the stacked population, not a part of cellgan: it times only the
training steps of a cell-generation (`mnist-4x4`'s MLP pair: G 64-256-256-784
with tanh, D 784-256-256-1 with a sigmoid, BCE, Adam lr 2e-4 betas (0.5, 0.999),
90 batches of 100), without selection, fitness games or mixture scoring.

Usage: python3 tests/gpu/stacked_probe.py [--device cuda] [--members 1,16,64]
Prints one Markdown table: seconds per generation's training steps for each
member count, as a loop of separate modules, stacked (eager), and stacked with
a CUDA graph replaying the whole step (GPU only).
"""
import argparse
import time

import torch
import torch.nn.functional as F

G_SIZES = [64, 256, 256, 784]
D_SIZES = [784, 256, 256, 1]
BATCH, STEPS, LR, BETAS = 100, 90, 2e-4, (0.5, 0.999)


def stacked_params(members, sizes, device):
    """Weights [P, in, out] and biases [P, 1, out], PyTorch's Linear init."""
    weights, biases = [], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = fan_in ** -0.5
        weights.append(((torch.rand(members, fan_in, fan_out, device=device) * 2 - 1) * bound).requires_grad_())
        biases.append(((torch.rand(members, 1, fan_out, device=device) * 2 - 1) * bound).requires_grad_())
    return weights + biases


def stacked_mlp(params, x, last):
    layers = len(params) // 2
    for k in range(layers):
        x = torch.baddbmm(params[layers + k], x, params[k])
        x = F.leaky_relu(x, 0.2) if k < layers - 1 else last(x)
    return x


class StackedAdam:
    """Adam over stacked tensors: a learning rate and a step count per member, kept on the device."""

    def __init__(self, params, members, device):
        self.params = params
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.lr = torch.full((members, 1, 1), LR, device=device)
        self.step_count = torch.zeros((members, 1, 1), device=device)

    @torch.no_grad()
    def step(self):
        b1, b2 = BETAS
        self.step_count.add_(1)
        c1 = 1 - torch.pow(b1, self.step_count)
        c2 = 1 - torch.pow(b2, self.step_count)
        for p, m, v in zip(self.params, self.m, self.v):
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v / c2).sqrt_().add_(1e-8)
            p.addcdiv_(m * (self.lr / c1), denom, value=-1)
            p.grad.zero_()


def bce_per_member(p, target):
    # mean over a member's batch, summed over members: each member's gradient is its own
    return F.binary_cross_entropy(p, torch.full_like(p, target), reduction="none").mean(dim=(1, 2)).sum()


def make_stacked_step(members, data, device):
    gp, dp = stacked_params(members, G_SIZES, device), stacked_params(members, D_SIZES, device)
    for p in gp + dp:
        p.grad = torch.zeros_like(p)
    g_opt, d_opt = StackedAdam(gp, members, device), StackedAdam(dp, members, device)

    def step():
        idx = torch.randint(0, data.shape[0], (members, BATCH), device=device)
        real = data[idx]
        fake = stacked_mlp(gp, torch.randn(members, BATCH, G_SIZES[0], device=device), torch.tanh)
        d_loss = bce_per_member(stacked_mlp(dp, real, torch.sigmoid), 1.0) + bce_per_member(
            stacked_mlp(dp, fake.detach(), torch.sigmoid), 0.0)
        d_loss.backward()
        d_opt.step()
        fake = stacked_mlp(gp, torch.randn(members, BATCH, G_SIZES[0], device=device), torch.tanh)
        g_loss = bce_per_member(stacked_mlp(dp, fake, torch.sigmoid), 1.0)
        g_loss.backward()
        for p in dp:
            p.grad.zero_()
        g_opt.step()

    return step


def make_loop_step(members, data, device):
    def mlp(sizes, last):
        layers = []
        for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers += [torch.nn.Linear(i, o), torch.nn.LeakyReLU(0.2) if k < len(sizes) - 2 else last]
        return torch.nn.Sequential(*layers).to(device)

    cells = []
    for _ in range(members):
        g, d = mlp(G_SIZES, torch.nn.Tanh()), mlp(D_SIZES, torch.nn.Sigmoid())
        cells.append((g, d, torch.optim.Adam(g.parameters(), LR, BETAS), torch.optim.Adam(d.parameters(), LR, BETAS)))

    def step():
        for g, d, g_opt, d_opt in cells:
            real = data[torch.randint(0, data.shape[0], (BATCH,), device=device)]
            d_opt.zero_grad()
            fake = g(torch.randn(BATCH, G_SIZES[0], device=device))
            p_real, p_fake = d(real), d(fake.detach())
            (F.binary_cross_entropy(p_real, torch.ones_like(p_real)) +
             F.binary_cross_entropy(p_fake, torch.zeros_like(p_fake))).backward()
            d_opt.step()
            g_opt.zero_grad()
            p = d(g(torch.randn(BATCH, G_SIZES[0], device=device)))
            F.binary_cross_entropy(p, torch.ones_like(p)).backward()
            g_opt.step()

    return step


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def seconds_per_generation(step, device, generations=3):
    for _ in range(3):
        step()
    sync(device)
    began = time.perf_counter()
    for _ in range(generations * STEPS):
        step()
    sync(device)
    return (time.perf_counter() - began) / generations


def graphed(step, device):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--members", default="1,16,64")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(1)
    if device.type == "cpu":
        torch.set_num_threads(1)
    data = torch.rand(9000, 784, device=device) * 2 - 1
    print(f"device: {torch.cuda.get_device_name() if device.type == 'cuda' else 'cpu, 1 thread'}; torch {torch.__version__}")
    print("| cells | loop of modules (s/gen) | stacked (s/gen) | stacked + CUDA graph (s/gen) |")
    print("| --- | --- | --- | --- |")
    for members in [int(m) for m in args.members.split(",")]:
        loop = seconds_per_generation(make_loop_step(members, data, device), device, 1 if members > 16 else 2)
        stacked = seconds_per_generation(make_stacked_step(members, data, device), device)
        graph = "n/a"
        if device.type == "cuda":
            graph = f"{seconds_per_generation(graphed(make_stacked_step(members, data, device), device), device):.4f}"
        print(f"| {members} | {loop:.4f} | {stacked:.4f} | {graph} |", flush=True)


if __name__ == "__main__":
    main()
