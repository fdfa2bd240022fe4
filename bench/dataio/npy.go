package dataio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Array is an n-dimensional array read from a .npy file, in row-major (C) order whatever the
// order of the file. Exactly one of Float and Int is set: Float for floating-point dtypes
// (float32 values are converted exactly), Int for integer dtypes.
type Array struct {
	// Shape holds the dimensions; it is empty for a 0-D (scalar) array.
	Shape []int
	// Float holds the elements of a floating-point array, nil otherwise.
	Float []float64
	// Int holds the elements of an integer array, nil otherwise.
	Int []int64
}

// Len returns the number of elements, the product of Shape.
func (a *Array) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// IsFloat reports whether the array holds floating-point data.
func (a *Array) IsFloat() bool { return a.Int == nil }

// Floats returns the elements as float64, converting integers (exactly when |v| <= 2^53).
// The returned slice is a.Float itself for floating-point arrays.
func (a *Array) Floats() []float64 {
	if a.Int == nil {
		return a.Float
	}
	f := make([]float64, len(a.Int))
	for i, v := range a.Int {
		f[i] = float64(v)
	}
	return f
}

var npyMagic = []byte("\x93NUMPY")

// maxNPYBytes bounds the data size a header may declare.
const maxNPYBytes = 1 << 50

// dtype describes a supported element type.
type dtype struct {
	float bool
	size  int
	sign  bool // signed integer
	order binary.ByteOrder
}

const supportedDtypes = "<f8, <f4, <i8, <i4, <i2, |i1, <u4, <u2, |u1 and their big-endian '>' forms"

func parseDtype(s string) (dtype, bool) {
	if len(s) != 3 {
		return dtype{}, false
	}
	var t dtype
	switch s[0] {
	case '<':
		t.order = binary.LittleEndian
	case '>':
		t.order = binary.BigEndian
	case '|':
		t.order = binary.LittleEndian // only valid for 1-byte types, checked below
	default:
		return dtype{}, false
	}
	size := int(s[2] - '0')
	switch s[1] {
	case 'f':
		if size != 4 && size != 8 {
			return dtype{}, false
		}
		t.float = true
	case 'i':
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return dtype{}, false
		}
		t.sign = true
	case 'u':
		if size != 1 && size != 2 && size != 4 {
			return dtype{}, false
		}
	default:
		return dtype{}, false
	}
	if s[0] == '|' && size != 1 {
		return dtype{}, false // '|' (no byte order) is only valid for 1-byte types
	}
	t.size = size
	return t, true
}

// ReadNPY reads a NumPy .npy array (format versions 1.0, 2.0 and 3.0) of dtype float64,
// float32 or a fixed-width integer type, in C or Fortran order, of any number of
// dimensions. Malformed input yields a one-line error; ReadNPY never panics on bad data.
// Bytes after the array data are ignored, as NumPy does.
func ReadNPY(r io.Reader) (*Array, error) {
	return readNPY(r, -1)
}

// ReadNPYFile reads the .npy file at path; errors are prefixed with the path.
func ReadNPYFile(path string) (*Array, error) { return ReadNPYFileTee(path, nil) }

// ReadNPYFileTee reads the .npy file at path as ReadNPYFile does and, when tee is not nil,
// also writes every byte of the file to tee, the bytes after the array data included (a hash
// of the whole file, say, so that checking a file does not read it a second time). tee sees
// the whole file only when the array reads without error.
func ReadNPYFileTee(path string, tee io.Writer) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	var src io.Reader = f
	if tee != nil {
		src = io.TeeReader(f, tee)
	}
	a, err := readNPY(bufio.NewReaderSize(src, 1<<16), size)
	if err == nil && tee != nil {
		// The rest of the file (what the buffer has not read ahead) goes to tee too.
		_, err = io.Copy(io.Discard, src)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// readNPY reads an array; size is the total input size when known (-1 otherwise).
func readNPY(r io.Reader, size int64) (*Array, error) {
	var pre [10]byte
	n, err := io.ReadFull(r, pre[:8])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n < 6 || !bytes.Equal(pre[:6], npyMagic) {
		return nil, errors.New("not a .npy file (bad magic)")
	}
	if n < 8 {
		return nil, errors.New("truncated .npy header")
	}
	major, minor := pre[6], pre[7]
	var hlen int
	switch major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, errors.New("truncated .npy header")
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, errors.New("truncated .npy header")
		}
		h := binary.LittleEndian.Uint32(b[:])
		if h > 1<<24 {
			return nil, fmt.Errorf("implausible .npy header length %d", h)
		}
		hlen = int(h)
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor)
	}
	if minor != 0 {
		return nil, fmt.Errorf("unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated .npy header: expected %d header bytes", hlen)
	}
	descr, fortran, shape, err := parseHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	dt, ok := parseDtype(descr)
	if !ok {
		return nil, fmt.Errorf("unsupported dtype %q (supported: %s)", descr, supportedDtypes)
	}
	count := int64(1)
	for _, d := range shape {
		if d != 0 && count > maxNPYBytes/int64(dt.size)/int64(d) {
			return nil, fmt.Errorf("array shape %s is too large", shapeString(shape))
		}
		count *= int64(d)
	}
	need := count * int64(dt.size)
	if size >= 0 {
		offset := int64(12) + int64(hlen)
		if major == 1 {
			offset = 10 + int64(hlen)
		}
		if size-offset < need {
			return nil, fmt.Errorf("truncated data: expected %d bytes, got %d", need, max(size-offset, 0))
		}
	}
	var data []byte
	if size >= 0 {
		data = make([]byte, need)
		got, err := io.ReadFull(r, data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, err
		}
		data = data[:got]
	} else {
		// Grow with the data actually present, so that a header declaring a huge shape
		// cannot make us allocate memory the input does not back.
		data, err = io.ReadAll(io.LimitReader(r, need))
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) < need {
		return nil, fmt.Errorf("truncated data: expected %d bytes, got %d", need, len(data))
	}
	a := &Array{Shape: shape}
	cnt := int(count)
	if dt.float {
		a.Float = make([]float64, cnt)
		if dt.size == 8 {
			for i := range a.Float {
				a.Float[i] = math.Float64frombits(dt.order.Uint64(data[8*i:]))
			}
		} else {
			for i := range a.Float {
				a.Float[i] = float64(math.Float32frombits(dt.order.Uint32(data[4*i:])))
			}
		}
	} else {
		a.Int = make([]int64, cnt)
		for i := range a.Int {
			b := data[dt.size*i:]
			var v int64
			switch {
			case dt.size == 8:
				v = int64(dt.order.Uint64(b))
			case dt.size == 4 && dt.sign:
				v = int64(int32(dt.order.Uint32(b)))
			case dt.size == 4:
				v = int64(dt.order.Uint32(b))
			case dt.size == 2 && dt.sign:
				v = int64(int16(dt.order.Uint16(b)))
			case dt.size == 2:
				v = int64(dt.order.Uint16(b))
			case dt.sign:
				v = int64(int8(b[0]))
			default:
				v = int64(b[0])
			}
			a.Int[i] = v
		}
	}
	if fortran && len(shape) > 1 {
		if a.Float != nil {
			a.Float = fortranToC(a.Float, shape)
		} else {
			a.Int = fortranToC(a.Int, shape)
		}
	}
	return a, nil
}

// fortranToC reorders column-major (first index fastest) data into row-major order.
func fortranToC[T any](src []T, shape []int) []T {
	dst := make([]T, len(src))
	nd := len(shape)
	// Strides of the Fortran layout.
	fstride := make([]int, nd)
	s := 1
	for i := 0; i < nd; i++ {
		fstride[i] = s
		s *= shape[i]
	}
	idx := make([]int, nd)
	off := 0 // Fortran offset of idx
	for c := range dst {
		dst[c] = src[off]
		// Increment the C-order multi-index (last index fastest).
		for ax := nd - 1; ax >= 0; ax-- {
			idx[ax]++
			off += fstride[ax]
			if idx[ax] < shape[ax] {
				break
			}
			off -= idx[ax] * fstride[ax]
			idx[ax] = 0
		}
	}
	return dst
}

func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// parseHeader parses the Python dict literal of a .npy header.
func parseHeader(h string) (descr string, fortran bool, shape []int, err error) {
	p := &pyParser{s: h}
	v, err := p.value(0)
	if err != nil {
		return "", false, nil, fmt.Errorf("bad .npy header: %v", err)
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return "", false, nil, fmt.Errorf("bad .npy header: unexpected %q after the dictionary", clip(p.s[p.i:]))
	}
	d, ok := v.(pyDict)
	if !ok {
		return "", false, nil, errors.New("bad .npy header: not a dictionary")
	}
	var haveDescr, haveFortran, haveShape bool
	for _, kv := range d {
		switch kv.key {
		case "descr":
			haveDescr = true
			s, ok := kv.val.(string)
			if !ok {
				return "", false, nil, fmt.Errorf("unsupported dtype %s (structured dtypes are not supported; supported: %s)", pyString(kv.val), supportedDtypes)
			}
			descr = s
		case "fortran_order":
			haveFortran = true
			b, ok := kv.val.(bool)
			if !ok {
				return "", false, nil, fmt.Errorf("bad .npy header: fortran_order is %s, expected True or False", pyString(kv.val))
			}
			fortran = b
		case "shape":
			haveShape = true
			t, ok := kv.val.(pyTuple)
			if !ok {
				return "", false, nil, fmt.Errorf("bad .npy header: shape is %s, expected a tuple", pyString(kv.val))
			}
			shape = make([]int, len(t))
			for i, e := range t {
				n, ok := e.(int64)
				if !ok || n < 0 || n > maxNPYBytes {
					return "", false, nil, fmt.Errorf("bad .npy header: shape %s has an invalid dimension", pyString(kv.val))
				}
				shape[i] = int(n)
			}
		default:
			return "", false, nil, fmt.Errorf("bad .npy header: unexpected key %q", kv.key)
		}
	}
	if !haveDescr || !haveFortran || !haveShape {
		return "", false, nil, errors.New("bad .npy header: missing one of the keys 'descr', 'fortran_order', 'shape'")
	}
	return descr, fortran, shape, nil
}

// A minimal parser for the Python literals found in .npy headers: dicts, tuples, lists,
// strings, integers (with an optional Python 2 'L' suffix), True, False and None.

type pyKV struct {
	key string
	val any
}
type (
	pyDict  []pyKV
	pyTuple []any
	pyList  []any
)

type pyParser struct {
	s string
	i int
}

const maxPyDepth = 32

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

func (p *pyParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > maxPyDepth {
		return nil, errors.New("nesting too deep")
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, errors.New("unexpected end")
	}
	c := p.s[p.i]
	switch {
	case c == '{':
		p.i++
		var d pyDict
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, errors.New("dictionary key is not a string")
			}
			for _, kv := range d {
				if kv.key == ks {
					return nil, fmt.Errorf("duplicate key %q", ks)
				}
			}
			p.skipSpace()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, errors.New("expected ':'")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d = append(d, pyKV{ks, v})
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
			return nil, errors.New("expected ',' or '}'")
		}
	case c == '(' || c == '[':
		closer := byte(')')
		if c == '[' {
			closer = ']'
		}
		p.i++
		var items []any
		sawComma := false
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == closer {
				p.i++
				break
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				sawComma = true
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == closer {
				p.i++
				break
			}
			return nil, fmt.Errorf("expected ',' or '%c'", closer)
		}
		if c == '[' {
			return pyList(items), nil
		}
		if len(items) == 1 && !sawComma {
			return items[0], nil // parenthesised expression, not a tuple
		}
		return pyTuple(items), nil
	case c == '\'' || c == '"':
		p.i++
		var b strings.Builder
		for p.i < len(p.s) && p.s[p.i] != c {
			if p.s[p.i] == '\\' && p.i+1 < len(p.s) {
				p.i++
			}
			b.WriteByte(p.s[p.i])
			p.i++
		}
		if p.i >= len(p.s) {
			return nil, errors.New("unterminated string")
		}
		p.i++
		return b.String(), nil
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad integer %q", clip(p.s[p.i:j]))
		}
		p.i = j
		if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') {
			p.i++
		}
		return n, nil
	default:
		j := p.i
		for j < len(p.s) && (p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] >= 'A' && p.s[j] <= 'Z' || p.s[j] == '_') {
			j++
		}
		switch p.s[p.i:j] {
		case "True":
			p.i = j
			return true, nil
		case "False":
			p.i = j
			return false, nil
		case "None":
			p.i = j
			return nil, nil
		}
		return nil, fmt.Errorf("unexpected %q", clip(p.s[p.i:]))
	}
}

// pyString renders a parsed literal for error messages.
func pyString(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return "'" + v + "'"
	case pyTuple:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = pyString(e)
		}
		if len(v) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case pyList:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = pyString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case pyDict:
		parts := make([]string, len(v))
		for i, kv := range v {
			parts[i] = "'" + kv.key + "': " + pyString(kv.val)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// WriteNPY writes float64 data of the given shape (row-major) as a version 1.0 .npy array
// with dtype '<f8' (version 2.0 if the header does not fit in 64 KiB).
func WriteNPY(w io.Writer, shape []int, data []float64) error {
	if err := writeNPYHeader(w, "<f8", shape, len(data)); err != nil {
		return err
	}
	return writeWords(w, len(data), func(i int) uint64 { return math.Float64bits(data[i]) })
}

// writeWords writes n little-endian 64-bit words word(0), ..., word(n-1) through a 32 KiB buffer.
func writeWords(w io.Writer, n int, word func(i int) uint64) error {
	buf := make([]byte, 0, 1<<15)
	for i := 0; i < n; i++ {
		buf = binary.LittleEndian.AppendUint64(buf, word(i))
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}

// WriteNPYInt64 writes int64 data of the given shape (row-major) as a .npy array with
// dtype '<i8'.
func WriteNPYInt64(w io.Writer, shape []int, data []int64) error {
	if err := writeNPYHeader(w, "<i8", shape, len(data)); err != nil {
		return err
	}
	return writeWords(w, len(data), func(i int) uint64 { return uint64(data[i]) })
}

// WriteNPYFile atomically writes float64 data of the given shape to a .npy file at path.
func WriteNPYFile(path string, shape []int, data []float64) error {
	return AtomicWrite(path, func(w io.Writer) error { return WriteNPY(w, shape, data) })
}

// WriteNPYInt64File atomically writes int64 data of the given shape to a .npy file at path.
func WriteNPYInt64File(path string, shape []int, data []int64) error {
	return AtomicWrite(path, func(w io.Writer) error { return WriteNPYInt64(w, shape, data) })
}

func writeNPYHeader(w io.Writer, descr string, shape []int, n int) error {
	count := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("dataio: negative dimension in shape %v", shape)
		}
		count *= d
	}
	if count != n {
		return fmt.Errorf("dataio: shape %v holds %d elements, data has %d", shape, count, n)
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shapeString(shape))
	// Pad with spaces and a final newline so that the data starts at a multiple of 64 bytes,
	// as NumPy does.
	pre := 10
	major := byte(1)
	if len(dict)+1+pre > 65535 {
		pre, major = 12, 2
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hlen := total - pre
	h := make([]byte, 0, total)
	h = append(h, npyMagic...)
	h = append(h, major, 0)
	if major == 1 {
		h = binary.LittleEndian.AppendUint16(h, uint16(hlen))
	} else {
		h = binary.LittleEndian.AppendUint32(h, uint32(hlen))
	}
	h = append(h, dict...)
	for len(h) < total-1 {
		h = append(h, ' ')
	}
	h = append(h, '\n')
	_, err := w.Write(h)
	return err
}
