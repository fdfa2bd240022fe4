// Package bench provides the paper's benchmark manifolds and embedding-quality metrics (trustworthiness, continuity, Spearman, Procrustes, principal angles; exact up to ExactLimit points, subsampled above).
package bench
