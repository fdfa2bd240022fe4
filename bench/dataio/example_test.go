package dataio_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"glle/bench/dataio"
)

// AtomicWrite replaces a file only when the whole content was written: a failed write
// leaves the previous version untouched.
func ExampleAtomicWrite() {
	dir, err := os.MkdirTemp("", "atomic-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "result.csv")

	err = dataio.AtomicWrite(path, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, "x,y\n1,2")
		return err
	})
	fmt.Println("first write:", err)

	err = dataio.AtomicWrite(path, func(w io.Writer) error {
		fmt.Fprintln(w, "x,y\n3,") // half a row ...
		return fmt.Errorf("interrupted")
	})
	fmt.Println("second write:", err)

	m, err := dataio.ReadMatrix(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("file still holds:", m.RawRowView(0))
	entries, _ := os.ReadDir(dir)
	fmt.Println("files in the directory:", len(entries))
	// Output:
	// first write: <nil>
	// second write: interrupted
	// file still holds: [1 2]
	// files in the directory: 1
}
