// Package engine fits LLE and Generative LLE (EM and direct sampling) and generates stochastic embeddings.
package engine
