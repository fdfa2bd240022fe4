// Package bench provides the paper's benchmark manifolds and exact embedding-quality metrics (trustworthiness, continuity, Spearman, Procrustes, principal angles).
package bench
