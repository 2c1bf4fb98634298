#!/usr/bin/env python3
"""GPyTorch's DeepGP on a dgpviz data file: the side-by-side benchmark of
docs/measurements.md ("Big data").

The model is the recipe of GPyTorch's multitask deep GP example
(examples/05_Deep_Gaussian_Processes/DGP_Multitask_Regression.ipynb: one
hidden layer of 3 dimensions, 128 inducing points a layer, Matérn 5/2
kernels, DeepApproximateMLL over VariationalELBO, Adam at 0.1), trained by
doubly stochastic VI on minibatches of 1,024 rows with 5 samples, on one
thread. The example's mean modules are kept as it has them: its flag
linear_mean=True gives the hidden layer a ConstantMean and the last layer a
LinearMean. Its learning rate, 0.1, is the example's; GPyTorch's
single-output deep GP notebook uses 0.01 (-lr), which left the walk at
7.3 dBm after 30 batches.

glibc's malloc hands torch's large temporaries (80 MB a batch at 30 outputs)
back to the kernel and faults them in again at every batch: half the CPU
time was the kernel's. MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736
in the environment keep them in the heap (2.7 s of CPU a batch instead of
5.5, at 2.6 GB peak RSS instead of 1.7); scripts/bench/side_by_side.sh sets
both.
After every -every batches (default: every epoch) it prints the training's
CPU and wall seconds so far, the held-out checks' own time excluded, and the
held-out RMSE in the outputs' original units (rows whose split column says
test), until the RMSE reaches -target or -epochs run out.

Usage: python gpytorch_walk.py FILE.csv [-epochs 3] [-target 2.2] [-every K] [-lr 0.1] [-threads 1]
GPyTorch is installed by ../shared/peers/install-gpytorch.sh (not a dependency
of dgpviz).
"""
import argparse
import csv
import time

import numpy as np
import torch
import gpytorch
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.means import ConstantMean, LinearMean
from gpytorch.distributions import MultivariateNormal
from gpytorch.models.deep_gps import DeepGPLayer, DeepGP
from gpytorch.mlls import DeepApproximateMLL, VariationalELBO
from gpytorch.likelihoods import MultitaskGaussianLikelihood
from gpytorch.variational import VariationalStrategy, CholeskyVariationalDistribution


def read(path):
    """The training and held-out rows of a dgpviz CSV file: x* columns in,
    y* columns out, the split column's test rows held out. Numbers are read
    by NumPy's C parser and the split column on its own, so the reader's
    memory stays near the data's float64 size."""
    with open(path) as f:
        header = next(csv.reader([f.readline()]))
    name = [h.split('[')[0].strip() for h in header]
    xs = [i for i, h in enumerate(name) if h.startswith('x')]
    ys = [i for i, h in enumerate(name) if h.startswith('y')]
    data = np.loadtxt(path, delimiter=',', skiprows=1, usecols=xs + ys, ndmin=2)
    if 'split' in name:
        split = np.loadtxt(path, delimiter=',', skiprows=1, usecols=[name.index('split')], dtype='U5', ndmin=1)
        test = split == 'test'
    else:
        test = np.zeros(len(data), bool)
    x, y = data[:, :len(xs)], data[:, len(xs):]
    return x[~test], y[~test], x[test], y[test]


class Layer(DeepGPLayer):
    def __init__(self, input_dims, output_dims, num_inducing=128, constant_mean=True):
        inducing = torch.randn(output_dims, num_inducing, input_dims)
        batch = torch.Size([output_dims])
        q = CholeskyVariationalDistribution(num_inducing_points=num_inducing, batch_shape=batch)
        strategy = VariationalStrategy(self, inducing, q, learn_inducing_locations=True)
        super().__init__(strategy, input_dims, output_dims)
        self.mean_module = ConstantMean() if constant_mean else LinearMean(input_dims)
        self.covar_module = ScaleKernel(MaternKernel(nu=2.5, batch_shape=batch, ard_num_dims=input_dims),
                                        batch_shape=batch, ard_num_dims=None)

    def forward(self, x):
        return MultivariateNormal(self.mean_module(x), self.covar_module(x))


class Model(DeepGP):
    def __init__(self, q, d, hidden=3):
        super().__init__()
        self.hidden_layer = Layer(q, hidden, constant_mean=True)
        self.last_layer = Layer(hidden, d, constant_mean=False)
        self.likelihood = MultitaskGaussianLikelihood(num_tasks=d)

    def forward(self, x):
        return self.last_layer(self.hidden_layer(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('-epochs', type=int, default=3)
    ap.add_argument('-target', type=float, default=2.2)
    ap.add_argument('-threads', type=int, default=1)
    ap.add_argument('-batch', type=int, default=1024)
    ap.add_argument('-samples', type=int, default=5)
    ap.add_argument('-lr', type=float, default=0.1, help="Adam's learning rate (the multitask example's 0.1)")
    ap.add_argument('-every', type=int, default=0,
                    help='batches between held-out checks (0: after every epoch)')
    ap.add_argument('-check-rows', type=int, default=0,
                    help='held-out rows the checks predict, a fixed random subset (0: all); '
                         'a check that reaches the target is confirmed on all of them')
    ap.add_argument('-seed', type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    cpu0, wall0 = time.process_time(), time.time()
    x, y, xt, yt = read(a.file)
    xm, xs = x.mean(0), x.std(0)
    ym, ys = y.mean(0), y.std(0)
    tx = torch.tensor((x - xm) / xs, dtype=torch.float32)
    ty = torch.tensor((y - ym) / ys, dtype=torch.float32)
    txt = torch.tensor((xt - xm) / xs, dtype=torch.float32)
    model = Model(tx.shape[1], ty.shape[1])
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    mll = DeepApproximateMLL(VariationalELBO(model.likelihood, model, num_data=len(tx)))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(tx, ty), batch_size=a.batch, shuffle=True)
    print(f'gpytorch {gpytorch.__version__}, torch {torch.__version__}, {a.threads} thread(s): '
          f'{len(tx)} training rows, {len(txt)} held out, {ty.shape[1]} outputs, Adam at {a.lr}; '
          f'read in {time.process_time() - cpu0:.1f} s CPU', flush=True)

    # At a million rows a prediction of every held-out row costs minutes:
    # -check-rows predicts a fixed subset, whose RMSE's standard error is
    # small beside the target's margin, and all of them once it is reached.
    subset = np.arange(len(txt))
    if 0 < a.check_rows < len(txt):
        subset = np.sort(np.random.default_rng(a.seed).choice(len(txt), a.check_rows, replace=False))

    def heldout(rows):
        model.eval()
        means = []
        with torch.no_grad(), gpytorch.settings.num_likelihood_samples(a.samples):
            for k in range(0, len(rows), 4096):
                p = model.likelihood(model(txt[rows[k:k + 4096]]))
                means.append(p.mean.mean(0).numpy())
        model.train()
        mean = np.concatenate(means) * ys + ym
        return float(np.sqrt(np.mean((mean - yt[rows]) ** 2)))

    # The training's clock excludes the held-out checks, which are the
    # benchmark's, not the method's: their CPU and wall time are counted
    # apart and subtracted.
    cpu0, wall0 = time.process_time(), time.time()
    cpu_check = wall_check = 0.0
    per_epoch = len(loader)
    every = a.every if a.every > 0 else per_epoch
    batches = 0
    model.train()
    for epoch in range(1, a.epochs + 1):
        for bx, by in loader:
            with gpytorch.settings.num_likelihood_samples(a.samples):
                opt.zero_grad()
                loss = -mll(model(bx), by)
                loss.backward()
                opt.step()
            batches += 1
            if batches % every and batches % per_epoch:
                continue
            c, w = time.process_time(), time.time()
            rows = subset
            rmse = heldout(rows)
            if rmse <= a.target and len(rows) < len(txt):
                rows = np.arange(len(txt))
                rmse = heldout(rows)
            cpu_check += time.process_time() - c
            wall_check += time.time() - w
            print(f'batch {batches} (epoch {batches / per_epoch:.2f}): '
                  f'{time.process_time() - cpu0 - cpu_check:.1f} s CPU, '
                  f'{time.time() - wall0 - wall_check:.1f} s wall training, '
                  f'held-out RMSE {rmse:.3f} ({len(rows)} rows) '
                  f'(checks so far {cpu_check:.1f} s CPU)', flush=True)
            if rmse <= a.target:
                print(f'reached {a.target} after {batches} batches', flush=True)
                return
    print(f'not reached {a.target} in {a.epochs} epochs', flush=True)


if __name__ == '__main__':
    main()
