// Package testmat builds dense test matrices with known properties for the project's tests.
package testmat
