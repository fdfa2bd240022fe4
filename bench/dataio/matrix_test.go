package dataio

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestReadCSV(t *testing.T) {
	cases := []struct {
		name, in string
		rows     [][]float64
		header   []string
	}{
		{"comma", "1,2,3\n4,5,6\n", [][]float64{{1, 2, 3}, {4, 5, 6}}, nil},
		{"comma-spaces-crlf", " 1 , 2.5e-3,3\r\n-4,+5 , 6\r\n", [][]float64{{1, 2.5e-3, 3}, {-4, 5, 6}}, nil},
		{"whitespace", "1 2\t3\n  4   5 6\n", [][]float64{{1, 2, 3}, {4, 5, 6}}, nil},
		{"header", "x,y\n1,2\n3,4", [][]float64{{1, 2}, {3, 4}}, []string{"x", "y"}},
		{"quoted-header-bom", "\ufeff\"x\",\"y\"\n\"1\",2\n", [][]float64{{1, 2}}, []string{"x", "y"}},
		{"ws-header-comments-blank", "# data\n\nalpha beta\n\n1 2\n# mid\n3 4\n\n", [][]float64{{1, 2}, {3, 4}}, []string{"alpha", "beta"}},
		{"single-column", "1\n2\n3\n", [][]float64{{1}, {2}, {3}}, nil},
		// Tab separated: names with spaces (split on runs of whitespace before session 31:
		// "line 2 has 2 values, expected 4").
		{"tsv-header-spaces", "sepal length\tsepal width\n1\t2\n", [][]float64{{1, 2}}, []string{"sepal length", "sepal width"}},
		{"tsv-spaces-around", "1 \t 2\n3\t4\n", [][]float64{{1, 2}, {3, 4}}, nil},
		// A tab-separated header over space-separated data (read so before session 31).
		{"tab-header-space-data", "x\ty\n1 2\n3  4\n", [][]float64{{1, 2}, {3, 4}}, []string{"x", "y"}},
		// Lone '\r' line ends (classic Mac OS): one row before session 31.
		{"cr-only", "1 2\r3 4\r5 6\r", [][]float64{{1, 2}, {3, 4}, {5, 6}}, nil},
		{"cr-only-comma-header", "x,y\r1,2\r3,4", [][]float64{{1, 2}, {3, 4}}, []string{"x", "y"}},
		// A '\r' inside a quoted cell is not a line end (a review of session 31's change).
		{"quoted-cr", "\"a\rb\",c\r\n1,2\r\n", [][]float64{{1, 2}}, []string{"a\rb", "c"}},
		// RFC 4180 quoting: the separator inside quotes is part of the cell ("line 2 has 3
		// values, expected 4" before, a user trial), "" is one quote.
		{"quoted-comma-header", "\"a,b\",c,d\n1,2,3\n4,5,6\n", [][]float64{{1, 2, 3}, {4, 5, 6}}, []string{"a,b", "c", "d"}},
		// Tab- and space-separated with a quoted comma: read as comma-separated, and refused,
		// before a review of session 33.
		{"quoted-comma-tab", "\"a,b\"\t\"c\"\n1\t2\n", [][]float64{{1, 2}}, []string{"a,b", "c"}},
		{"quoted-comma-space", "\"a,b\" \"c\"\n1 2\n", [][]float64{{1, 2}}, []string{"a,b", "c"}},
		// A no-break space beside a quoted cell: a separator (space-separated) and trimmed
		// (comma-separated), as in lines without quotes; ASCII blanks only before a review of
		// session 33 ("line 1 has 1 values", and "\"2\"" kept its quotes).
		{"nbsp-quoted-space", "3 4\n1\u00a0\"2\"\n", [][]float64{{3, 4}, {1, 2}}, nil},
		{"nbsp-quoted-comma", "3,4\n1 , \u00a0\"2\"\u00a0\n", [][]float64{{3, 4}, {1, 2}}, nil},
		{"quoted-doubled-quote", "\"say \"\"hi\"\"\", \"x\"\n\"1\" ,2\n", [][]float64{{1, 2}}, []string{`say "hi"`, "x"}},
		{"quoted-tab-header", "\"a\tb\"\tc\n1\t2\n", [][]float64{{1, 2}}, []string{"a\tb", "c"}},
		{"quoted-space-header", "\"sepal length\" \"sepal width\"\n1 2\n", [][]float64{{1, 2}}, []string{"sepal length", "sepal width"}},
		{"quoted-single-column", "\"a,b\"\n1\n2\n", [][]float64{{1}, {2}}, []string{"a,b"}},
		{"quoted-all", "\"x\",\"y\"\n\"1.5\",\"-2\"\n", [][]float64{{1.5, -2}}, []string{"x", "y"}},
		{"inner-quote-kept", "in\"ch,b\n1,2\n", [][]float64{{1, 2}}, []string{`in"ch`, "b"}},
	}
	for _, c := range cases {
		m, h, err := ReadCSV(strings.NewReader(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		r, cols := m.Dims()
		if r != len(c.rows) || cols != len(c.rows[0]) {
			t.Errorf("%s: got %d x %d", c.name, r, cols)
			continue
		}
		for i, row := range c.rows {
			if !reflect.DeepEqual(m.RawRowView(i), row) {
				t.Errorf("%s: row %d = %v, want %v", c.name, i, m.RawRowView(i), row)
			}
		}
		if !reflect.DeepEqual(h, c.header) {
			t.Errorf("%s: header %q, want %q", c.name, h, c.header)
		}
	}
}

const indexMsg = "line 1 starts with an empty cell above a column of row labels, as pandas' to_csv and R's write.csv write: save without the row labels (pandas index=False, R row.names=FALSE)"

// TestReadCSVColumnNumbers checks what columnNumbers refuses and what it leaves alone, and that
// WriteCSV's output of a matrix whose first row is 0, 1, ..., c-1 reads back unchanged.
func TestReadCSVColumnNumbers(t *testing.T) {
	for _, in := range []string{
		"1,2,3\n4,5,6\n",   // 1-based: a common first data row, not a pandas header
		"0.0,1,2\n4,5,6\n", // the documented way to keep 0, 1, 2 as data
		"0,2,1\n4,5,6\n",   // not in order
		"00,1,2\n4,5,6\n",  // not bare
		"0\n1\n",           // one column: never names
	} {
		if _, _, err := ReadCSV(strings.NewReader(in)); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
	for _, in := range []string{
		"0,1,2,3,4,5,6,7,8,9,10\n" + strings.Repeat("1,", 10) + "1\n", // two-digit names
		"\"0\",\"1\"\n2,3\n", // quoted
	} {
		if m, _, err := ReadCSV(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "column numbers pandas writes") {
			t.Errorf("%q: read as %v, error %v; want the column-number error", in, m, err)
		}
	}
	for _, sep := range []string{".csv", ".tsv", ".txt"} {
		m := mat.NewDense(2, 3, []float64{0, 1, 2, 0.5, 1.5, 2.5})
		path := filepath.Join(t.TempDir(), "m"+sep)
		if err := WriteMatrix(path, m); err != nil {
			t.Fatal(err)
		}
		got, err := ReadMatrix(path)
		if err != nil {
			t.Fatalf("%s: %v", sep, err)
		}
		if !mat.Equal(got, m) {
			t.Errorf("%s: read back %v", sep, mat.Formatted(got))
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "empty file (no data rows)"},
		{"blank", "\n  \n# only a comment\n", "empty file (no data rows)"},
		{"header-only", "x,y,z\n", "no data rows after the header"},
		{"ragged", "1,2,3\n4,5,6\n7,8\n", "line 3 has 2 values, expected 3 (as on line 1)"},
		{"ragged-header", "a b c\n1 2 3 4\n", "line 2 has 4 values, expected 3 (as on header line 1)"},
		{"non-numeric", "1,2\n3,abc\n", `line 2, column 2: "abc" is not a number`},
		// Go-only spellings strconv.ParseFloat accepts and NumPy does not.
		{"underscore", "1,2\n3,1_000\n", `line 2, column 2: "1_000" is not a number`},
		{"hex float", "1,2\n0x1p-2,4\n", `line 2, column 1: "0x1p-2" is not a number`},
		{"non-numeric-first", "1,x\n3,4\n", `line 1, column 2: "x" is not a number (a header line must contain only names)`},
		{"empty-cell", "1,,3\n", "line 1, column 2: empty cell"},
		{"semicolons", "x;y\n1;2\n", `line 2, column 1: "1;2" is not a number (semicolons do not separate values: use commas, tabs or spaces)`},
		// A quoted value with a decimal comma: `"\"1" is not a number` before (a user trial).
		{"decimal-comma", "x,y\n\"1,5\",2\n", `line 2, column 1: "1,5" has a comma, which is not read as a number: write a decimal point for a decimal comma (1.5), or drop a thousands separator (15); export the file with '.' as the decimal separator and no thousands separators`},
		{"decimal-comma-tsv", "x\ty\n2\t-1,5e3\n", `line 2, column 2: "-1,5e3" has a comma, which is not read as a number: write a decimal point for a decimal comma (-1.5e3), or drop a thousands separator (-15e3); export the file with '.' as the decimal separator and no thousands separators`},
		// A thousands separator: the advice was only a decimal point, which made 1,000 into 1.
		{"thousands", "x,y\n\"1,000\",2\n", `line 2, column 1: "1,000" has a comma, which is not read as a number: write a decimal point for a decimal comma (1.000), or drop a thousands separator (1000); export the file with '.' as the decimal separator and no thousands separators`},
		// A quoted name with a comma in a tab-separated file was read as comma-separated.
		{"quoted-comma-tab-header", "\"a,b\"\tc\n1\t2\n\"x\"\t3\n", `line 3, column 1: "x" is not a number`},
		{"quoted-two-values", "x,y\n\"1,2,3\",2\n", `line 2, column 1: "1,2,3" is not a number (a comma inside a quoted or tab- or space-separated cell does not separate values: one value per cell)`},
		{"quote-unclosed", "x,y\n\"1,2\n", "line 2, column 1: the double quote that opens this cell is not closed on the line: close it (a cell spanning lines is not supported) or remove it"},
		{"quote-trailing-text", "\"a\"b,c\n1,2\n", `line 1, column 1: text follows the closing double quote of a quoted cell: quote the whole cell, writing each double quote inside it as two ("")`},
		{"quoted-header-ragged", "\"a,b\",c\n1,2,3\n", "line 2 has 3 values, expected 2 (as on header line 1)"},
		{"tsv-empty-cell", "1\t2\t3\n4\t\t6\n", "line 2, column 2: empty cell"},
		{"tsv-leading-empty", "1\t2\t3\n\t5\t6\n", "line 2, column 1: empty cell"},
		{"tsv-trailing-empty", "1\t2\t3\n4\t5\t\n", "line 2, column 3: empty cell"},
		{"cr-only-ragged", "1,2\r3\r", "line 2 has 1 values, expected 2 (as on line 1)"},
		{"trailing-comma", "1,2,\n", "line 1, column 3: empty cell"},
		{"nan", "1,2\n3,NaN\n", `line 2, column 2: non-finite value "NaN"`},
		{"inf", "1 2\n\n-inf 4\n", `line 3, column 1: non-finite value "-inf"`},
		{"overflow", "1,1e999\n", `line 1, column 2: non-finite value "1e999"`},
		{"utf16le", "\xff\xfe1\x00,\x002\x00\n\x00", "the file is UTF-16 text: save it as UTF-8 or ASCII"},
		{"utf16be", "\xfe\xff\x001\x00,\x002\n", "the file is UTF-16 text: save it as UTF-8 or ASCII"},
		// pandas' DataFrame(X).to_csv(path), R's write.csv(X) and pandas with sep="\t": an
		// empty cell above the row labels (it read as "column 1: empty cell").
		{"pandas-index", ",0,1,2\n0,1.5,2.5,3.5\n1,1.1,2.2,3.3\n", indexMsg},
		{"r-row-names", "\"\",\"V1\",\"V2\"\n\"1\",1.5,2.5\n", indexMsg},
		{"pandas-index-tab", "\t0\t1\t2\n0\t1.5\t2.5\t3.5\n", indexMsg},
		// DataFrame(X).to_csv(path, index=False): the column numbers read as a data point.
		{"pandas-columns", "0,1,2\n1.5,2.5,3.5\n", "line 1 is 0,1,2, the column numbers pandas writes as the header of a DataFrame made from an array: delete that line (pandas header=False), or write one of its values with a decimal point (0.0) if it is a data point"},
		{"pandas-columns-space", "# x\n0 1\n1.5 2.5\n", "line 2 is 0 1, the column numbers pandas writes as the header of a DataFrame made from an array: delete that line (pandas header=False), or write one of its values with a decimal point (0.0) if it is a data point"},
	}
	for _, c := range cases {
		_, _, err := ReadCSV(strings.NewReader(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestReadMatrixPathErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.csv")
	os.WriteFile(p, []byte("1,2\n3\n"), 0o644)
	if _, err := ReadMatrix(p); err == nil || err.Error() != p+": line 2 has 1 values, expected 2 (as on line 1)" {
		t.Errorf("got %v", err)
	}
	p = filepath.Join(dir, "empty.txt")
	os.WriteFile(p, nil, 0o644)
	if _, err := ReadMatrix(p); err == nil || err.Error() != p+": empty file (no data rows)" {
		t.Errorf("got %v", err)
	}
	// A .tsv file is tab separated whatever its first line: a run of tabs is an empty cell
	// (read as 2 x 2 [1 3; 4 6] before session 31). The same text in a .txt file is
	// whitespace-aligned columns.
	gap := []byte("1\t\t3\n4\t\t6\n")
	p = filepath.Join(dir, "gap.tsv")
	os.WriteFile(p, gap, 0o644)
	if _, err := ReadMatrix(p); err == nil || err.Error() != p+": line 1, column 2: empty cell" {
		t.Errorf("gap.tsv: got %v", err)
	}
	p = filepath.Join(dir, "gap.txt")
	os.WriteFile(p, gap, 0o644)
	if m, err := ReadMatrix(p); err != nil || !mat.Equal(m, mat.NewDense(2, 2, []float64{1, 3, 4, 6})) {
		t.Errorf("gap.txt: got %v, %v", m, err)
	}
	if _, err := ReadMatrix(filepath.Join(dir, "x.json")); err == nil || !strings.Contains(err.Error(), `unknown data file extension ".json"`) {
		t.Errorf("got %v", err)
	}
	if err := WriteMatrix(filepath.Join(dir, "x.json"), mat.NewDense(1, 1, nil)); err == nil {
		t.Error("WriteMatrix accepted .json")
	}
}

func TestWriteReadMatrix(t *testing.T) {
	dir := t.TempDir()
	m := mat.NewDense(3, 2, []float64{math.Pi, -1e-300, 1.0 / 3, 5e300, 0, -7})
	for _, ext := range []string{".npy", ".csv", ".tsv", ".txt", ".CSV"} {
		p := filepath.Join(dir, "m"+ext)
		if err := WriteMatrix(p, m); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		got, err := ReadMatrix(p)
		if err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if !mat.Equal(got, m) {
			t.Errorf("%s: read back %v", ext, mat.Formatted(got))
		}
	}
	// A sub-matrix view (stride != cols) is written correctly.
	big := mat.NewDense(3, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	view := big.Slice(1, 3, 1, 3).(*mat.Dense)
	p := filepath.Join(dir, "view.npy")
	if err := WriteMatrix(p, view); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadMatrix(p); !mat.Equal(got, view) {
		t.Errorf("view read back as %v", mat.Formatted(got))
	}
	var sb strings.Builder
	if err := WriteCSV(&sb, mat.NewDense(1, 2, []float64{1.5, 2}), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if sb.String() != "a,b\n1.5,2\n" {
		t.Errorf("WriteCSV wrote %q", sb.String())
	}
	// Names that need quotes get them, and read back.
	names := []string{"a,b", `say "hi"`, " pad"}
	sb.Reset()
	if err := WriteCSV(&sb, mat.NewDense(1, 3, []float64{1, 2, 3}), names); err != nil {
		t.Fatal(err)
	}
	if want := "\"a,b\",\"say \"\"hi\"\"\",\" pad\"\n1,2,3\n"; sb.String() != want {
		t.Errorf("WriteCSV wrote %q, want %q", sb.String(), want)
	}
	if _, h, err := ReadCSV(strings.NewReader(sb.String())); err != nil || !reflect.DeepEqual(h, names) {
		t.Errorf("read back header %q, %v", h, err)
	}
	// A line break in a name: written quoted across two lines before a review of session 33,
	// which ReadCSV (a line at a time) refused.
	sb.Reset()
	if err := WriteCSV(&sb, mat.NewDense(1, 2, []float64{1, 2}), []string{"a\nb", "c"}); err == nil || !strings.Contains(err.Error(), "line break") || sb.Len() != 0 {
		t.Errorf("a name with a line break: %v, wrote %q", err, sb.String())
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := AtomicWrite(p, write("first")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Fatalf("content %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm()&^0o666 != 0 || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("new file mode %v, want 0666 less the umask (TestAtomicWriteUmask)", fi.Mode().Perm())
	}
	// A failing writer leaves the old content and no temporary file.
	boom := errors.New("boom")
	err := AtomicWrite(p, func(w io.Writer) error {
		io.WriteString(w, strings.Repeat("partial", 1<<18)) // more than the buffer
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Errorf("content after failure %q", b)
	}
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out.txt"}) {
		t.Errorf("directory holds %v", names)
	}
	// A panicking writer leaves no file either.
	q := filepath.Join(dir, "new.npy")
	func() {
		defer func() { recover() }()
		AtomicWrite(q, func(w io.Writer) error { io.WriteString(w, "x"); panic("interrupted") })
	}()
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out.txt"}) {
		t.Errorf("directory holds %v after a panic", names)
	}
	// The mode of a replaced file is kept.
	os.Chmod(p, 0o600)
	if err := AtomicWrite(p, write("second")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(p); string(b) != "second" {
		t.Errorf("content %q", b)
	}
	// Errors: missing directory, directory target.
	if err := AtomicWrite(filepath.Join(dir, "nope", "x"), write("x")); err == nil {
		t.Error("no error for a missing directory")
	}
	if err := AtomicWrite(dir, write("x")); err == nil {
		t.Error("no error for a directory target")
	}
	// A write error inside WriteMatrix (shape mismatch cannot happen; use WriteNPYFile).
	if err := WriteNPYFile(filepath.Join(dir, "bad.npy"), []int{3}, []float64{1}); err == nil {
		t.Error("WriteNPYFile accepted mismatched data")
	}
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out.txt"}) {
		t.Errorf("directory holds %v", names)
	}
}

// zeroReader is an endless stream of NUL bytes, as /dev/zero.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestReadCSVEndlessLine: a text file without line ends (a link to /dev/zero) was read until
// memory ran out (a Go fatal error with a stack trace, before session 32); the line is capped
// at maxLineBytes with a message saying what to give instead.
func TestReadCSVEndlessLine(t *testing.T) {
	_, _, err := ReadCSV(zeroReader{})
	if err == nil || !strings.Contains(err.Error(), "line 1 is longer than 64 MiB") || !HasFix(err) {
		t.Errorf("endless line: %v", err)
	}
	// readLineMax at a small cap: lines up to the cap pass, with their '\n'.
	br := bufio.NewReaderSize(strings.NewReader("12345\n123456789\n"), 16)
	if b, err := readLineMax(br, nil, 6); string(b) != "12345\n" || err != nil {
		t.Errorf("short line: %q, %v", b, err)
	}
	if _, err := readLineMax(br, nil, 6); !errors.Is(err, errLongLine) {
		t.Errorf("long line: %v", err)
	}
	// '\r' ends a line too (classic Mac OS text): 12 bytes without '\n' but in '\r'-lines of
	// at most 6 pass the cap of 6 (a '\r'-only file above 64 MiB was refused, session 32).
	br = bufio.NewReaderSize(strings.NewReader("1234\r12345\r1\n"), 16)
	if b, err := readLineMax(br, nil, 6); string(b) != "1234\r12345\r1\n" || err != nil {
		t.Errorf("'\\r' lines: %q, %v", b, err)
	}
	br = bufio.NewReaderSize(strings.NewReader("12\r1234567\n"), 16)
	if _, err := readLineMax(br, nil, 6); !errors.Is(err, errLongLine) {
		t.Errorf("a long '\\r'-line: %v", err)
	}
	// A long '\r'-segment inside one chunk, and exactly max bytes before the '\n' (the first
	// version measured only the last segment of a chunk, and counted the '\n').
	br = bufio.NewReaderSize(strings.NewReader("1234567890\r1\n"), 16)
	if _, err := readLineMax(br, nil, 6); !errors.Is(err, errLongLine) {
		t.Errorf("a long '\\r'-segment inside a chunk: %v", err)
	}
	br = bufio.NewReaderSize(strings.NewReader("123456\n"), 16)
	if b, err := readLineMax(br, nil, 6); err != nil || string(b) != "123456\n" {
		t.Errorf("6 bytes and '\\n' at a cap of 6: %q, %v", b, err)
	}
}

// TestReadMatrixFrom: the content of a reader is read by the name's extension, with the name
// in the errors, as ReadMatrix reads a file (glle-bench reads named pipes through it).
func TestReadMatrixFrom(t *testing.T) {
	want := mat.NewDense(2, 2, []float64{1, 2, 3, 4.5})
	var npy strings.Builder
	if err := WriteNPY(&npy, []int{2, 2}, want.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.csv": "x,y\n1,2\n3,4.5\n", "a.TSV": "1\t2\n3\t4.5\n", "a.txt": "1 2\n3 4.5\n", "a.npy": npy.String()} {
		if m, err := ReadMatrixFrom(strings.NewReader(text), name); err != nil || !mat.Equal(m, want) {
			t.Errorf("%s: %v, %v", name, m, err)
		}
	}
	if _, err := ReadMatrixFrom(strings.NewReader("1,2\n3\n"), "p/b.csv"); err == nil || err.Error() != "p/b.csv: line 2 has 1 values, expected 2 (as on line 1)" {
		t.Errorf("got %v", err)
	}
	if _, err := ReadMatrixFrom(strings.NewReader(npy.String()[:20]), "b.npy"); err == nil || !strings.HasPrefix(err.Error(), "b.npy: ") {
		t.Errorf("got %v", err)
	}
	if _, err := ReadMatrixFrom(strings.NewReader("1"), "b.dat"); err == nil || !strings.Contains(err.Error(), `unknown data file extension ".dat"`) {
		t.Errorf("got %v", err)
	}
}
