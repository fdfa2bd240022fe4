package dataio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// ReadMatrix reads an n x d data matrix (one point per row) from path, choosing the format by
// extension: .npy (2-D, float64, float32 or integer dtype, converted to float64) or
// .csv, .tsv, .txt (text, see ReadCSV; a .tsv file is always tab separated, so that an empty
// cell is an error rather than merged with its neighbour). The matrix must have at least one row and one
// column and only finite values. Errors are one line, prefixed with the path, and name the
// offending row and column.
func ReadMatrix(path string) (*mat.Dense, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy", ".csv", ".tsv", ".txt":
	default:
		return nil, unknownExt(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMatrixFrom(f, path)
}

// ReadMatrixFrom is ReadMatrix on the content of r, the file called name: name's extension
// chooses the format and prefixes the errors. When r is an *os.File of a regular file, a .npy
// array's size is checked against the file's before its data is allocated.
func ReadMatrixFrom(r io.Reader, name string) (*mat.Dense, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".npy":
		size := int64(-1)
		if f, ok := r.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				size = fi.Size()
			}
		}
		a, err := readNPY(bufio.NewReaderSize(r, 1<<16), size)
		if err == nil {
			var m *mat.Dense
			if m, err = a.Matrix(); err == nil {
				return m, nil
			}
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	case ".csv", ".tsv", ".txt":
		var sep byte // detected
		if strings.EqualFold(filepath.Ext(name), ".tsv") {
			sep = '\t'
		}
		m, _, err := readDelimited(r, sep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return m, nil
	}
	return nil, unknownExt(name)
}

func unknownExt(path string) error {
	return fmt.Errorf("%s: unknown data file extension %q (use .npy, .csv, .tsv or .txt)", path, filepath.Ext(path))
}

// Matrix returns a 2-D array as an n x d matrix (integers converted to float64). It fails for
// arrays that are not 2-D, that have no rows or columns, or that hold NaN or infinite values
// (the error names the first one, 0-based as in NumPy).
func (a *Array) Matrix() (*mat.Dense, error) {
	if len(a.Shape) != 2 {
		return nil, fmt.Errorf("array is %d-D %s, expected 2-D (n x d)", len(a.Shape), shapeString(a.Shape))
	}
	r, c := a.Shape[0], a.Shape[1]
	if r == 0 || c == 0 {
		return nil, fmt.Errorf("array has shape %s, expected at least one row and one column", shapeString(a.Shape))
	}
	data := a.Floats()
	for i, v := range data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("non-finite value %v at row %d, column %d (0-based)", v, i/c, i%c)
		}
	}
	if a.Int == nil {
		data = append([]float64(nil), data...) // do not alias a.Float
	}
	return mat.NewDense(r, c, data), nil
}

// ReadCSV reads a numeric matrix from delimited text, one point per line.
//
// The first non-blank, non-comment line decides the separator: a comma when it contains one
// outside double quotes; else a tab when it contains one and its tab-separated cells are all
// numbers or all names (a header whose names contain spaces; data lines under it without a tab
// are split on spaces); else runs of spaces and tabs. With commas and tabs
// every separator separates two cells, so an empty cell is an error. Blank lines and lines starting with '#' are
// skipped; a UTF-8 byte order mark, "\r\n" and lone '\r' line ends and spaces around cells are
// tolerated. A cell may be quoted as RFC 4180 has it: within double quotes the separator is
// part of the cell and a doubled quote ("") is one quote (a header name "a,b" is one name); a
// quoted cell must close on its line and be followed by a separator, and a value with a
// decimal comma ("1,5") is refused with a message saying so. The first line is a header when every one of its
// cells is non-numeric; its names are returned (nil without a header). Two first lines are
// refused with a hint rather than read as data: the bare column numbers 0, 1, ..., c-1 that
// pandas writes for a DataFrame made from an array, and an empty first cell above
// a column of row labels (pandas' index, R's row names). Every row must have the
// same number of values; empty cells, non-numeric cells, NaN and infinities are errors naming
// the line and column (both 1-based).
func ReadCSV(r io.Reader) (*mat.Dense, []string, error) { return readDelimited(r, 0) }

// readDelimited is ReadCSV with the separator forced to sep (0: detected).
func readDelimited(r io.Reader, sep byte) (*mat.Dense, []string, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var (
		header    []string
		data      []float64
		cols      = -1
		colsLine  int
		first     = true
		headerTab bool // the separator is a detected tab, decided on the first line only
		lineNo    int
		fields    []string
	)
	// row handles one line (without its line end).
	row := func(line string) error {
		lineNo++
		if lineNo == 1 {
			if strings.HasPrefix(line, "\xff\xfe") || strings.HasPrefix(line, "\xfe\xff") {
				return &fixError{"the file is UTF-16 text: save it as UTF-8 or ASCII"}
			}
			line = strings.TrimPrefix(line, "\ufeff")
		}
		s := strings.TrimSpace(line)
		if s == "" || s[0] == '#' {
			return nil
		}
		if first && sep == 0 {
			switch {
			case hasUnquoted(s, ','):
				sep = ','
			case strings.IndexByte(s, '\t') >= 0 && uniformCells(s):
				sep = '\t'
				headerTab = true // until the first data line says otherwise (below)
			default:
				sep = ' ' // runs of spaces and tabs
			}
		} else if headerTab {
			// The first line after a detected tab-separated one: data without a tab under a
			// tab-separated header of names is space separated (as before session 31).
			headerTab = false
			if header != nil && strings.IndexByte(s, '\t') < 0 {
				sep = ' '
			}
		}
		cells := s
		if sep == '\t' {
			// Tabs at either end separate empty cells: trim only spaces (TrimSpace
			// dropped them, so "\t1\t2" read as two values).
			cells = strings.Trim(strings.TrimPrefix(line, "\ufeff"), " ")
		}
		var qerr *quoteError
		if fields, qerr = splitCells(cells, sep, fields[:0]); qerr != nil {
			if qerr.unclosed {
				return &fixError{fmt.Sprintf("line %d, column %d: the double quote that opens this cell is not closed on the line: close it (a cell spanning lines is not supported) or remove it", lineNo, qerr.col)}
			}
			return &fixError{fmt.Sprintf("line %d, column %d: text follows the closing double quote of a quoted cell: quote the whole cell, writing each double quote inside it as two (\"\")", lineNo, qerr.col)}
		}
		onFirst := first
		if first {
			first = false
			if len(fields) > 1 && fields[0] == "" && allNonEmpty(fields[1:]) &&
				(allNonNumeric(fields[1:]) || columnNumbers(fields[1:])) {
				return &fixError{fmt.Sprintf("line %d starts with an empty cell above a column of row labels, as pandas' to_csv and R's write.csv write: save without the row labels (pandas index=False, R row.names=FALSE)", lineNo)}
			}
			if columnNumbers(fields) {
				return &fixError{fmt.Sprintf("line %d is %s, the column numbers pandas writes as the header of a DataFrame made from an array: delete that line (pandas header=False), or write one of its values with a decimal point (0.0) if it is a data point", lineNo, clip(strings.Join(fields, string(sepOrSpace(sep)))))}
			}
			if allNonNumeric(fields) {
				header = append([]string(nil), fields...)
				cols, colsLine = len(fields), lineNo
				return nil
			}
		}
		if cols < 0 {
			cols, colsLine = len(fields), lineNo
		} else if len(fields) != cols {
			what := "line"
			if header != nil {
				what = "header line"
			}
			return fmt.Errorf("line %d has %d values, expected %d (as on %s %d)", lineNo, len(fields), cols, what, colsLine)
		}
		for j, f := range fields {
			if f == "" {
				return fmt.Errorf("line %d, column %d: empty cell", lineNo, j+1)
			}
			v, perr := parseNumber(f)
			if perr != nil && !isRangeErr(perr) {
				if strings.Contains(f, ",") {
					// Only a quoted cell holds a comma in a comma-separated file.
					if dot := strings.Replace(f, ",", ".", 1); strings.Count(f, ",") == 1 {
						if _, err := parseNumber(dot); err == nil || isRangeErr(err) {
							return &fixError{fmt.Sprintf("line %d, column %d: %q has a comma, which is not read as a number: write a decimal point for a decimal comma (%s), or drop a thousands separator (%s); export the file with '.' as the decimal separator and no thousands separators", lineNo, j+1, clip(f), clip(dot), clip(strings.Replace(f, ",", "", 1)))}
						}
					}
					return &fixError{fmt.Sprintf("line %d, column %d: %q is not a number (a comma inside a quoted or tab- or space-separated cell does not separate values: one value per cell)", lineNo, j+1, clip(f))}
				}
				if strings.Contains(f, ";") {
					return &fixError{fmt.Sprintf("line %d, column %d: %q is not a number (semicolons do not separate values: use commas, tabs or spaces)", lineNo, j+1, clip(f))}
				}
				hint := ""
				if onFirst {
					hint = " (a header line must contain only names)"
				}
				return fmt.Errorf("line %d, column %d: %q is not a number%s", lineNo, j+1, clip(f), hint)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("line %d, column %d: non-finite value %q", lineNo, j+1, clip(f))
			}
			data = append(data, v)
		}
		return nil
	}
	var lineBuf []byte
	for {
		raw, err := readLineMax(br, lineBuf[:0], maxLineBytes)
		lineBuf = raw
		if errors.Is(err, errLongLine) {
			return nil, nil, &fixError{fmt.Sprintf("line %d is longer than %d MiB: the file is not delimited text of one point per line (a binary file or a device such as /dev/zero?): give a .npy file or text with one point per line", lineNo+1, maxLineBytes>>20)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, err
		}
		line := string(raw)
		if line == "" && err != nil {
			break
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		// A '\r' left inside, outside double quotes, is a line end of its own (classic Mac
		// OS text); a quoted cell keeps it.
		for {
			cut := crOutsideQuotes(line)
			if rerr := row(line[:cut]); rerr != nil {
				return nil, nil, rerr
			}
			if cut == len(line) {
				break
			}
			line = line[cut+1:]
		}
		if err != nil {
			break
		}
	}
	if len(data) == 0 {
		if header != nil {
			return nil, nil, errors.New("no data rows after the header")
		}
		return nil, nil, errors.New("empty file (no data rows)")
	}
	if cols == 0 {
		return nil, nil, errors.New("no columns")
	}
	return mat.NewDense(len(data)/cols, cols, data), header, nil
}

// maxLineBytes bounds one line of a text data file: 64 MiB is millions of values, far beyond
// any point's row, and a file without line ends (a binary file, a link to /dev/zero) must
// fail with a message instead of exhausting memory (session 32).
const maxLineBytes = 64 << 20

var errLongLine = errors.New("line too long")

// readLineMax appends the next line of br, with its '\n', to buf; it returns errLongLine as
// soon as more than max bytes pass without a line end, '\n' or '\r' (a file with classic
// Mac OS line ends is one '\n'-line of many '\r'-lines, split by the caller), and br's error
// (io.EOF at the end) otherwise.
func readLineMax(br *bufio.Reader, buf []byte, max int) ([]byte, error) {
	lastEnd := len(buf) - 1 // index of the last '\r' seen in buf (the line's start - 1 before any)
	for {
		chunk, err := br.ReadSlice('\n')
		start := len(buf)
		buf = append(buf, chunk...)
		// Every '\r'-segment that ends in this chunk, then the open one (without its '\n').
		for i := start; ; {
			j := bytes.IndexByte(buf[i:], '\r')
			if j < 0 {
				break
			}
			if i+j-lastEnd-1 > max {
				return buf, errLongLine
			}
			lastEnd = i + j
			i += j + 1
		}
		open := len(buf) - lastEnd - 1
		if open > 0 && buf[len(buf)-1] == '\n' {
			open--
		}
		if open > max {
			return buf, errLongLine
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

// fixError is an error whose message already says how to fix the input (HasFix).
type fixError struct{ msg string }

func (e *fixError) Error() string { return e.msg }

// HasFix reports whether err's message (from ReadMatrix or ReadCSV) already says how to fix
// the input, so that a caller need not append generic advice.
func HasFix(err error) bool {
	var f *fixError
	return errors.As(err, &f)
}

// crOutsideQuotes returns the index of the first '\r' of line outside double quotes, or
// len(line).
func crOutsideQuotes(line string) int {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			quoted = !quoted
		case '\r':
			if !quoted {
				return i
			}
		}
	}
	return len(line)
}

// uniformCells reports whether the tab-separated cells of line (trimmed and unquoted) are all
// non-empty and either all numbers or all names.
func uniformCells(line string) bool {
	cells, qerr := splitCells(line, '\t', nil)
	if qerr != nil {
		return false
	}
	nums := 0
	for _, c := range cells {
		if c == "" {
			return false
		}
		if _, err := parseNumber(c); err == nil || isRangeErr(err) {
			nums++
		}
	}
	return nums == 0 || nums == len(cells)
}

// parseNumber parses a decimal number as text files write them (as NumPy and pandas read
// them): strconv.ParseFloat, minus the Go-only spellings it also accepts, digit-separating
// underscores (1_000) and hexadecimal mantissas (0x1p-2).
func parseNumber(f string) (float64, error) {
	if strings.ContainsAny(f, "_xX") {
		return 0, &strconv.NumError{Func: "parseNumber", Num: f, Err: strconv.ErrSyntax}
	}
	return strconv.ParseFloat(f, 64)
}

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

// quoteError is a quoted cell that does not close on its line (unclosed), or that is
// followed by more than spaces before the next separator; col is the cell's column (1-based).
type quoteError struct {
	col      int
	unclosed bool
}

// splitCells appends the cells of line to dst and returns them: separated by sep (',' or
// '\t'; every separator separates two cells) or, for sep ' ', by runs of blanks. Spaces around
// a cell are dropped. A cell whose first non-blank character is a double quote is quoted, as
// in RFC 4180: it runs to the next double quote not doubled, the separators inside are part
// of it and "" stands for one quote; only blanks may follow it before the separator. A double
// quote inside an unquoted cell is kept as it is.
func splitCells(line string, sep byte, dst []string) ([]string, *quoteError) {
	if strings.IndexByte(line, '"') < 0 { // the common case, as before quoting was read
		if sep == ' ' {
			return append(dst, strings.Fields(line)...), nil
		}
		for c := range strings.SplitSeq(line, string(sep)) {
			dst = append(dst, strings.TrimSpace(c))
		}
		return dst, nil
	}
	// blank is the byte length of a white-space character at line[i] other than the separator
	// (0 if there is none): Unicode spaces, as strings.Fields and strings.TrimSpace read them in
	// lines without quotes (a no-break space separated cells there and not here before a
	// review of session 33).
	blank := func(i int) int {
		r, n := utf8.DecodeRuneInString(line[i:])
		if unicode.IsSpace(r) && (sep == ' ' || r != rune(sep)) {
			return n
		}
		return 0
	}
	// sepLen is the byte length of a separator at line[i] (0 if there is none).
	sepLen := func(i int) int {
		if sep == ' ' {
			return blank(i)
		}
		if line[i] == sep {
			return 1
		}
		return 0
	}
	var b strings.Builder
	i := 0
	for {
		for i < len(line) && blank(i) > 0 {
			i += blank(i)
		}
		if sep == ' ' && i == len(line) {
			return dst, nil
		}
		col := len(dst) + 1
		if i < len(line) && line[i] == '"' {
			b.Reset()
			j, closed := i+1, false
			for j < len(line) {
				if line[j] == '"' {
					if j+1 < len(line) && line[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(line[j])
				j++
			}
			if !closed {
				return dst, &quoteError{col: col, unclosed: true}
			}
			for sep != ' ' && j < len(line) && blank(j) > 0 {
				j += blank(j)
			}
			if j < len(line) && sepLen(j) == 0 {
				return dst, &quoteError{col: col}
			}
			dst = append(dst, b.String())
			i = j
		} else {
			j := i
			for j < len(line) && sepLen(j) == 0 {
				j++ // a byte at a time: no separator starts inside a multi-byte character
			}
			dst = append(dst, strings.TrimSpace(line[i:j]))
			i = j
		}
		if i == len(line) {
			return dst, nil
		}
		if sep != ' ' {
			i++ // the separator; a cell (perhaps empty) follows it
		}
	}
}

// hasUnquoted reports whether line holds the byte c outside quoted cells (as splitCells reads
// them, with c as the separator); with a quoting error, whether it holds c at all.
func hasUnquoted(line string, c byte) bool {
	if strings.IndexByte(line, c) < 0 {
		return false
	}
	cells, qerr := splitCells(line, c, nil)
	if qerr == nil {
		return len(cells) > 1
	}
	// A quoting error with c as the separator: c separates values unless the line splits
	// cleanly on a tab or blanks (a quoted "a,b" followed by a tab and another name).
	for _, o := range []byte{'\t', ' '} {
		if o != c {
			if _, e := splitCells(line, o, nil); e == nil {
				return false
			}
		}
	}
	return true
}

func allNonEmpty(fields []string) bool {
	for _, f := range fields {
		if f == "" {
			return false
		}
	}
	return true
}

// columnNumbers reports whether fields, at least two, are the bare integers 0, 1, ..., c-1 in
// order (digits only): the column names pandas gives a DataFrame made from an array. Read as
// data they would add a point; ReadCSV refuses them instead (WriteCSV never writes such a
// first row).
func columnNumbers(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	for j, f := range fields {
		if f != strconv.Itoa(j) {
			return false
		}
	}
	return true
}

func sepOrSpace(sep byte) byte {
	if sep == ' ' || sep == 0 {
		return ' '
	}
	return sep
}

func allNonNumeric(fields []string) bool {
	for _, f := range fields {
		if f == "" {
			return false
		}
		if _, err := parseNumber(f); err == nil || isRangeErr(err) {
			return false
		}
	}
	return true
}

// WriteMatrix atomically writes m to path, choosing the format by extension: .npy (float64,
// C order), .csv (comma separated), .tsv (tab separated) or .txt (space separated). Text
// formats use the shortest representation that reads back to the same float64.
func WriteMatrix(path string, m *mat.Dense) error {
	var sep byte
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		r, c := m.Dims()
		data := make([]float64, 0, r*c)
		for i := 0; i < r; i++ {
			data = append(data, m.RawRowView(i)...)
		}
		return WriteNPYFile(path, []int{r, c}, data)
	case ".csv":
		sep = ','
	case ".tsv":
		sep = '\t'
	case ".txt":
		sep = ' '
	default:
		return fmt.Errorf("%s: unknown data file extension %q (use .npy, .csv, .tsv or .txt)", path, filepath.Ext(path))
	}
	return AtomicWrite(path, func(w io.Writer) error { return writeDelimited(w, m, nil, sep) })
}

// WriteCSV writes m as comma-separated text, one row per line, preceded by a header line
// when header is not nil (it must have one name per column, without line breaks; a name
// holding a comma, a double quote or white space is written in double quotes, as ReadCSV
// reads it).
func WriteCSV(w io.Writer, m mat.Matrix, header []string) error {
	return writeDelimited(w, m, header, ',')
}

func writeDelimited(w io.Writer, m mat.Matrix, header []string, sep byte) error {
	r, c := m.Dims()
	if header != nil && len(header) != c {
		return fmt.Errorf("dataio: %d header names for %d columns", len(header), c)
	}
	for j, h := range header {
		if strings.Contains(h, "\n") {
			// ReadCSV reads a line at a time: a quoted cell cannot span lines.
			return fmt.Errorf("dataio: header name %d (%q) holds a line break, which ReadCSV cannot read back: remove it", j, h)
		}
	}
	buf := make([]byte, 0, 1<<15)
	flush := func() error {
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	if header != nil {
		for j, h := range header {
			if j > 0 {
				buf = append(buf, sep)
			}
			// Quoted as ReadCSV reads quotes when the name holds the separator, a quote or
			// white space, or as the line's start would read as a comment, a byte order mark
			// or UTF-16.
			if strings.ContainsAny(h, string(sep)+`"`) || strings.ContainsFunc(h, unicode.IsSpace) ||
				j == 0 && (strings.HasPrefix(h, "#") || strings.HasPrefix(h, "\ufeff") || strings.HasPrefix(h, "\xff\xfe") || strings.HasPrefix(h, "\xfe\xff")) {
				h = `"` + strings.ReplaceAll(h, `"`, `""`) + `"`
			}
			buf = append(buf, h...)
		}
		buf = append(buf, '\n')
	}
	for i := 0; i < r; i++ {
		start := len(buf)
		for j := 0; j < c; j++ {
			if j > 0 {
				buf = append(buf, sep)
			}
			buf = strconv.AppendFloat(buf, m.At(i, j), 'g', -1, 64)
		}
		if i == 0 && header == nil {
			// A first row 0, 1, ..., c-1 reads as column numbers: give its
			// first value a decimal point (columnNumbers).
			row := strings.Split(string(buf[start:]), string(sep))
			if columnNumbers(row) {
				buf = append(buf[:start], row[0]+".0"...)
				for _, f := range row[1:] {
					buf = append(append(buf, sep), f...)
				}
			}
		}
		buf = append(buf, '\n')
		if len(buf) > 1<<14 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
