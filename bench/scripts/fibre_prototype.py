#!/usr/bin/env python3
"""Independent NumPy/SciPy check of the default GLLE generations on the S-curve.

It implements the math notes' fibre EM (section 3) and maximum-likelihood direct sampling
(section 4) from their formulas, without the engine. For each data realization it prints the
base LLE embedding's trustworthiness (k = 10) and max |Spearman| with the roll coordinate t,
then the same figures for G generations at covariance scale a = 1. At the end it prints how
many generations fell below trustworthiness 0.99 or |Spearman| 0.98. docs/performance.md
compares these counts with the engine's on the same points.

Needs numpy, scipy and scikit-learn (make peers-deps installs them). Usage:

  fibre_prototype.py METHOD SEEDS G [X_PATTERN T_PATTERN]

  METHOD     em or direct
  SEEDS      comma-separated integers
  G          generations per seed
  X_PATTERN  optional .npy path with one %d for the seed (n x 3 points); without it the points
  T_PATTERN  are scikit-learn's make_s_curve(5000, random_state=seed); T_PATTERN: n x 1 or n
             values of t (glle-bench dataset -name scurve -out X.npy -color-out t.npy writes both)
"""
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from scipy.stats import spearmanr
from sklearn.datasets import make_s_curve
from sklearn.manifold import trustworthiness
from sklearn.neighbors import NearestNeighbors

K, P, REG = 10, 2, 1e-3  # neighbours, embedding dimension, LLE ridge (times trace(G_i))


def bottom_eigenvectors(W, idx):
    """The P eigenvectors of M = (I - W)^T (I - W) above the constant one, and all P+1 values."""
    n = W.shape[0]
    rows = np.repeat(np.arange(n), K)
    A = sp.eye(n) - sp.csr_matrix((W.ravel(), (rows, idx.ravel())), shape=(n, n))
    M = (A.T @ A).tocsc()
    vals, vecs = sla.eigsh(M, k=P + 1, sigma=-1e-10, which="LM", tol=1e-12)
    order = np.argsort(vals)
    return vecs[:, order[1:]], vals[order]


def max_spearman(Y, t):
    return max(abs(spearmanr(Y[:, j], t)[0]) for j in range(P))


def fit(X):
    """LLE weights, fibre projectors and fibre-EM variances of every point."""
    n, d = X.shape
    _, idx = NearestNeighbors(n_neighbors=K + 1).fit(X).kneighbors(X)
    idx = idx[:, 1:]
    W, Pi, sigma, Z = np.zeros((n, K)), np.zeros((n, K, K)), np.zeros(n), []
    for i in range(n):
        Zi = (X[idx[i]] - X[i]).T  # d x K offsets
        G = Zi.T @ Zi
        w = np.linalg.solve(G + REG * np.trace(G) * np.eye(K), np.ones(K))
        W[i] = w / w.sum()
        C = np.vstack([np.ones(K), Zi])  # the fibre is the null space of C (shifted)
        _, s, Vt = np.linalg.svd(C)
        rank = int((s > s[0] * max(C.shape) * np.finfo(float).eps).sum())
        Pi[i] = Vt[rank:].T @ Vt[rank:]
        sigma[i] = np.sum((W[i] - 1.0 / K) ** 2) / (rank - 1)  # r_i = rank - 1
        Z.append(Zi)
    return idx, W, Pi, sigma, Z


def direct_roots(X, Y, idx, W, Z):
    """Symmetric square roots of the ML-temperature covariances Gamma_i."""
    n, d = X.shape
    V = [(Y[idx[i]] - Y[i]).T for i in range(n)]
    sx2 = sum(np.sum((Z[i] @ W[i]) ** 2) for i in range(n)) / (n * d)
    sy2 = sum(np.sum((V[i] @ W[i]) ** 2) for i in range(n)) / (n * P)
    roots, one = np.zeros((n, K, K)), np.ones(K)
    for i in range(n):
        G = Z[i].T @ Z[i]
        S = np.linalg.inv(G / sx2 + V[i].T @ V[i] / sy2 + (REG * np.trace(G) / sx2) * np.eye(K))
        S = S - np.outer(S @ one, one @ S) / (one @ S @ one)  # conditioned on sum-to-one
        ev, U = np.linalg.eigh((S + S.T) / 2)
        roots[i] = U @ np.diag(np.sqrt(np.clip(ev, 0, None))) @ U.T
    return roots


def main():
    if len(sys.argv) not in (4, 6) or sys.argv[1] not in ("em", "direct"):
        sys.exit("usage: fibre_prototype.py em|direct SEEDS G [X_PATTERN T_PATTERN]")
    method, seeds, gens = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
    n_fail = n_total = 0
    for seed in seeds:
        if len(sys.argv) == 6:
            X, t = np.load(sys.argv[4] % seed), np.load(sys.argv[5] % seed).ravel()
        else:
            X, t = make_s_curve(5000, random_state=seed)
        idx, W, Pi, sigma, Z = fit(X)
        Y0, vals = bottom_eigenvectors(W, idx)
        print(f"seed {seed} base: trust {trustworthiness(X, Y0, n_neighbors=10):.4f} "
              f"|Spearman| {max_spearman(Y0, t):.4f} eigenvalues {vals[1:]}", flush=True)
        roots = direct_roots(X, Y0, idx, W, Z) if method == "direct" else None
        rng = np.random.default_rng(100 + seed)
        for g in range(gens):
            xi = rng.standard_normal(W.shape)
            if method == "em":
                Wg = W + np.sqrt(sigma)[:, None] * np.einsum("ijk,ik->ij", Pi, xi)
            else:
                Wg = W + np.einsum("ijk,ik->ij", roots, xi)
            Y, vals = bottom_eigenvectors(Wg, idx)
            tr, rho = trustworthiness(X, Y, n_neighbors=10), max_spearman(Y, t)
            bad = tr < 0.99 or rho < 0.98
            n_fail, n_total = n_fail + bad, n_total + 1
            print(f"  generation {g:2d}: trust {tr:.4f} |Spearman| {rho:.4f} eigenvalues {vals[1:]}"
                  + ("  below" if bad else ""), flush=True)
    print(f"{method}: {n_fail} of {n_total} generations below trustworthiness 0.99 or |Spearman| 0.98")


if __name__ == "__main__":
    main()
