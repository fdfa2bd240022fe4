// Package knn computes exact, deterministic k-nearest-neighbour graphs with a k-d tree or blocked brute force.
package knn
