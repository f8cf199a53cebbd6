#!/usr/bin/env bash
# Sets up everything and runs the quickstart: a 2x2 coevolution run on
# MNIST with 2 workers (3 MPI ranks). Ends with runs/quickstart/samples.png
# and the best ensemble's FID and TVD.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the run needs: deploy/run-tests.sh installs and builds the rest.
bash deploy/install-deps.sh --run
bash deploy/build.sh cellgan
bash deploy/prepare-data.sh
rm -rf runs/quickstart
# cellgan launch starts the 3 ranks under mpirun and restarts the run from
# its newest checkpoint if a rank is lost (docs/operations.md, "Launching").
build/app/cellgan launch -w 2 configs/quickstart.yaml
echo "quickstart: samples runs/quickstart/samples.png; curves, samples and events in runs/quickstart/report.html"
