package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench/dataio"
	"glle/engine"
)

// The files of a model folder.
const (
	metaFile      = "model.json"
	neighborsFile = "neighbors.npy"
	weightsFile   = "weights.npy"
	sigmaFile     = "sigma.npy"
	embeddingFile = "embedding.npy"
	dataFile      = "X.npy"
	// gammaFile holds the direct methods' Gamma_i, n x k x k, for inspection only: generate and
	// transform never read it (they recompute Gamma_i from X.npy, neighbors.npy and
	// weights.npy, which they validate), so a missing, damaged or edited gamma.npy changes
	// nothing, and model.json lists it under informational_files, not files. Checking it would
	// mean reading 8 n k^2 bytes (8e8 at n = 1M, k = 10: four times the other files together
	// for 3-D data) and recomputing every Gamma_i, for a file the run does not use.
	gammaFile = "gamma.npy"

	// modelFormatVersion is the version embed writes. Version 2 (since session 36) records
	// checksums of the files and of model.json's settings, and must have both; version 1 (no
	// checksums) is read unchecked, as it was written.
	modelFormatVersion = 2
)

// modelMeta is model.json.
type modelMeta struct {
	FormatVersion int       `json:"format_version"`
	Method        string    `json:"method"`
	K             int       `json:"k"`
	Dim           int       `json:"dim"`
	Reg           float64   `json:"reg"`
	RegMode       string    `json:"reg_mode"`
	Scaling       string    `json:"scaling"`
	DirectRidge   float64   `json:"direct_ridge"`
	Solver        string    `json:"solver"`
	Seed          uint64    `json:"seed"`
	EMIterations  int       `json:"em_iterations"`
	N             int       `json:"n"`
	D             int       `json:"d"`
	Eigenvalues   []float64 `json:"eigenvalues"`
	Shift         float64   `json:"eigen_shift"`
	Files         []string  `json:"files"` // the files generate and transform read (validated)
	// Checksums holds "sha256:HEX" of each file in Files, checked when the model is read, so
	// a damaged or edited file is refused instead of generating from it. Version-1 models
	// have none and are read unchecked.
	Checksums map[string]string `json:"checksums,omitempty"`
	// SettingsSum is "sha256:HEX" of model.json's fields, this one empty (settingsSum), so
	// that an edited method, k, reg, eigen_shift or checksum is refused too (an em model
	// relabelled em-paper has the same files). A checksum catches damage and naive edits; it
	// is no signature: whoever recomputes it can change anything.
	SettingsSum string `json:"settings_checksum,omitempty"`
	// Informational lists the files written for inspection only, which generate and
	// transform never read: gamma.npy (gammaFile).
	Informational []string `json:"informational_files,omitempty"`
	// EmbedGenerations records the generations the embed run that saved the model drew: its
	// -generations, -cov-scale, -frame, -align and -align-scale, which with Seed reproduce its
	// files through generate; absent when it drew none. generate does not read it (its own
	// flags decide; only -seed defaults to the model's).
	EmbedGenerations *genSettings `json:"embed_generations,omitempty"`
}

func modelFile(dir, name string) string { return filepath.Join(dir, name) }

// modelFiles lists every file a model folder can hold.
func modelFiles(dir string) []string {
	var paths []string
	for _, name := range []string{metaFile, neighborsFile, weightsFile, sigmaFile, embeddingFile, dataFile, gammaFile} {
		paths = append(paths, modelFile(dir, name))
	}
	return paths
}

// checkModelFolder refuses a -model folder that holds a file of a model's names (X.npy,
// weights.npy, ...) but no model.json of this tool: those files are not a saved model's, and
// saving would overwrite them (a project folder's X.npy was replaced silently before session
// 31, and one whose model.json was any other program's file before session 32). A folder whose
// model.json is this tool's model description is a model folder: saving replaces that model.
func checkModelFolder(dir string) error {
	meta := modelFile(dir, metaFile)
	if _, err := os.Lstat(meta); err == nil {
		raw, err := readMetaFile(meta)
		var m map[string]json.RawMessage
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err == nil {
			for _, key := range []string{"format_version", "method", "files"} {
				if _, ok := m[key]; !ok {
					err = fmt.Errorf("no %q field", key)
					break
				}
			}
		}
		if err != nil {
			return modelErr(dir, "use a new or empty folder for -model (or delete "+metaFile+" if it is a damaged model of this tool)",
				"%s is not a glle-bench model's description (%s), so the folder's files are not a saved model and would be overwritten", metaFile, oneLine(unwrapPath(err).Error()))
		}
		return nil
	}
	for _, p := range modelFiles(dir) {
		if _, err := os.Lstat(p); err == nil {
			return modelErr(dir, "use a new or empty folder for -model", "%s exists but the folder has no %s, so it is not a saved model and would be overwritten", clip(p), metaFile)
		}
	}
	return nil
}

// maxMetaBytes bounds model.json: a model's description is a few kilobytes (its largest part
// is the Dim+1 eigenvalues), and a folder whose model.json is a link to /dev/zero or a
// multi-gigabyte file must fail with a message, not exhaust memory.
const maxMetaBytes = 1 << 20

// readMetaFile reads model.json: a regular file of at most maxMetaBytes.
func readMetaFile(path string) ([]byte, error) {
	// Stat before opening: opening a named pipe blocks until something writes to it (a user
	// trial: the run hung, and its first interrupt was not seen).
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if fi.IsDir() {
		return nil, errMetaDir
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() > maxMetaBytes {
		return nil, fmt.Errorf("%d bytes, more than a model description's %d", fi.Size(), maxMetaBytes)
	}
	return io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
}

var errMetaDir = errors.New("a folder")

// saveModel writes the model folder; model.json is written last, so a folder holding it is
// complete.
// gens records the run's generations in model.json (nil: none were drawn).
func saveModel(ctx context.Context, dir string, m *engine.Model, s engine.Settings, seed uint64, gens *genSettings, out *outputs) error {
	sv := m.Saved()
	n, d := sv.X.Dims()
	k, p := sv.K, sv.Dim
	sums := map[string]string{}
	write := func(name string, fn func(path string) error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return out.write("model", modelFile(dir, name), fn)
	}
	// writeSummed writes a .npy file generate and transform read (fn writes its bytes), and
	// records its checksum, hashed as it is written.
	writeSummed := func(name string, fn func(w io.Writer) error) error {
		return write(name, func(p string) error {
			h := sha256.New()
			if err := dataio.AtomicWrite(p, func(w io.Writer) error { return fn(io.MultiWriter(w, h)) }); err != nil {
				return err
			}
			sums[name] = sumString(h)
			return nil
		})
	}
	// An older model.json in dir describes the files this run replaces: it goes first at
	// commit, so that a commit cut short never looks like a complete model.
	out.retireAtCommit(modelFile(dir, metaFile))
	files := modelReadFiles(sv.Method)
	var informational []string // files for inspection only (gammaFile)
	nb := make([]int64, len(sv.Neighbors))
	for i, v := range sv.Neighbors {
		nb[i] = int64(v)
	}
	if err := writeSummed(neighborsFile, func(w io.Writer) error { return dataio.WriteNPYInt64(w, []int{n, k}, nb) }); err != nil {
		return err
	}
	if err := writeSummed(weightsFile, func(w io.Writer) error { return dataio.WriteNPY(w, []int{n, k}, sv.Weights) }); err != nil {
		return err
	}
	if sv.Sigma != nil {
		if err := writeSummed(sigmaFile, func(w io.Writer) error { return dataio.WriteNPY(w, []int{n}, sv.Sigma) }); err != nil {
			return err
		}
	}
	if sv.Method == engine.Direct || sv.Method == engine.DirectPaper {
		// The whole n x k x k array is built in memory (8 n k^2 bytes): dataio has no
		// streaming .npy writer.
		// Computing the file's content is part of writing it (the "write" stage).
		t0 := time.Now()
		g := make([]float64, n*k*k)
		ok := true
		scratch := make([]float64, engine.GammaScratch(k))
		for i := 0; i < n && ok; i++ {
			ok = m.GammaTo(g[i*k*k:(i+1)*k*k], scratch, i)
		}
		out.writing += time.Since(t0)
		if ok {
			informational = append(informational, gammaFile)
			if err := write(gammaFile, func(p string) error { return dataio.WriteNPYFile(p, []int{n, k, k}, g) }); err != nil {
				return err
			}
		}
	}
	if err := writeSummed(embeddingFile, func(w io.Writer) error { return dataio.WriteNPY(w, []int{n, p}, rowMajor(sv.Embedding)) }); err != nil {
		return err
	}
	if err := writeSummed(dataFile, func(w io.Writer) error { return dataio.WriteNPY(w, []int{n, d}, rowMajor(sv.X)) }); err != nil {
		return err
	}
	meta := modelMeta{
		FormatVersion: modelFormatVersion, Method: sv.Method.String(), K: k, Dim: p, Reg: sv.Reg,
		RegMode: regModeName(sv.RegMode), Scaling: scalingName(sv.Scaling), DirectRidge: sv.DirectRidge,
		Solver: solverName(s.Solver), Seed: seed, EMIterations: m.Report.EMIterations, N: n, D: d,
		Eigenvalues: sv.Eigenvalues, Shift: sv.Shift, Files: files, Checksums: sums, Informational: informational, EmbedGenerations: gens,
	}
	for i, v := range meta.Eigenvalues {
		if !finite(v) {
			meta.Eigenvalues = append([]float64(nil), meta.Eigenvalues...)
			meta.Eigenvalues[i] = 0
		}
	}
	// The files of an earlier model in dir that this one does not have (sigma.npy of an em
	// model re-saved as lle, say) go at commit, so the folder holds one model: only those its
	// model.json lists (a user trial: a note of the user's named gamma.npy beside an lle model
	// was deleted), and the summary names them.
	old := oldModelFiles(dir)
	for _, name := range []string{sigmaFile, gammaFile} {
		if slices.Contains(old, name) && !slices.Contains(files, name) && !slices.Contains(informational, name) {
			out.removeAtCommit(modelFile(dir, name))
		}
	}
	sum, err := settingsSum(meta)
	if err != nil {
		return err
	}
	meta.SettingsSum = sum
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", metaFile, err)
	}
	data = append(data, '\n')
	return write(metaFile, func(p string) error {
		return dataio.AtomicWrite(p, func(w io.Writer) error { _, err := w.Write(data); return err })
	})
}

// oldModelFiles lists the files the model.json in dir names (files and informational_files),
// or none when dir holds no readable model.json (checkModelFolder has vetted it).
func oldModelFiles(dir string) []string {
	raw, err := readMetaFile(modelFile(dir, metaFile))
	if err != nil {
		return nil
	}
	var m modelMeta
	if json.Unmarshal(bytes.TrimPrefix(raw, utf8BOM), &m) != nil {
		return nil
	}
	return append(m.Files, m.Informational...)
}

// modelErr is an error about the model folder dir. "-model DIR" in fix names dir itself.
func modelErr(dir, fix, format string, a ...any) error {
	fix = strings.ReplaceAll(fix, "-model DIR", "-model "+shellWord(dir))
	return badInput(fix, "model %q: %s", clip(dir), fmt.Sprintf(format, a...))
}

// shellWord returns s as one word of a POSIX shell command: as it is when it holds only
// characters no shell treats specially, else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@%,=") == "" {
		return clip(s)
	}
	return "'" + strings.ReplaceAll(clip(s), "'", `'\''`) + "'"
}

// utf8BOM is the byte-order mark some editors put at the start of a saved model.json.
var utf8BOM = []byte("\xef\xbb\xbf")

const resave = "re-save it with 'glle-bench embed -model DIR'"

// restoreModel rebuilds the model read from folder dir, shown as the "restore" stage of prog; a
// model Restore rejects is bad input unless ctx was cancelled. It returns the stage's time.
func restoreModel(ctx context.Context, prog *progress, sv engine.Saved, dir string, workers int, sol engine.Solver) (*engine.Model, engine.StageTime, error) {
	prog.update("restore", 0, 0, false)
	t0 := time.Now()
	m, err := engine.Restore(ctx, sv, workers, sol)
	if err != nil {
		if ctx.Err() != nil {
			return nil, engine.StageTime{}, err
		}
		return nil, engine.StageTime{}, badInput(resave, "model %q is incompatible (%v)", clip(dir), oneLine(err.Error()))
	}
	prog.update("restore", 0, 0, true)
	return m, engine.StageTime{Name: "restore", Seconds: time.Since(t0).Seconds()}, nil
}

// loadModel reads and validates the folder of a generative model.
func loadModel(dir string) (engine.Saved, modelMeta, error) { return loadModelFor(dir, true) }

// loadModelFor reads and validates a model folder; an lle model is accepted unless
// needGenerative is set (transform embeds new points with any model).
func loadModelFor(dir string, needGenerative bool) (engine.Saved, modelMeta, error) {
	var (
		sv   engine.Saved
		meta modelMeta
	)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sv, meta, modelErr(dir, "write one with 'glle-bench embed -model DIR'", "no such folder")
	case err != nil:
		return sv, meta, modelErr(dir, "check the path and its permissions", "cannot be read (%v)", unwrapPath(err))
	case !fi.IsDir():
		return sv, meta, modelErr(dir, "give the folder written by 'glle-bench embed -model DIR'", "not a folder")
	}
	raw, err := readMetaFile(modelFile(dir, metaFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return sv, meta, modelErr(dir, "give the folder written by 'glle-bench embed -model DIR'", "not a model folder (%s is missing)", metaFile)
		}
		if errors.Is(err, errMetaDir) {
			return sv, meta, modelErr(dir, "give the folder written by 'glle-bench embed -model DIR'", "%s is a folder, not the model's description", metaFile)
		}
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			return sv, meta, modelErr(dir, "give the folder written by 'glle-bench embed -model DIR'", "%s is not a model's description (%v)", metaFile, err)
		}
		return sv, meta, modelErr(dir, "check its permissions", "cannot read %s (%v)", metaFile, unwrapPath(err))
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(raw, utf8BOM)))
	if err := dec.Decode(&meta); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// Not Go's wording ("... into Go struct field modelMeta.k of type int").
			return sv, meta, modelErr(dir, resave, "%s is corrupt: %q holds a JSON %s where the model has %s", metaFile, te.Field, te.Value, jsonKind(te.Type.Kind()))
		}
		return sv, meta, modelErr(dir, resave, "%s is corrupt (%v)", metaFile, oneLine(err.Error()))
	}
	if meta.FormatVersion < 1 || meta.FormatVersion > modelFormatVersion {
		return sv, meta, modelErr(dir, resave+" using this glle-bench", "format version %d, this glle-bench reads versions 1 to %d", meta.FormatVersion, modelFormatVersion)
	}
	if sv.Method, err = engine.ParseMethod(meta.Method); err != nil {
		return sv, meta, modelErr(dir, resave, "unknown method %q in %s", clip(meta.Method), metaFile)
	}
	if needGenerative && !sv.Method.Generative() {
		return sv, meta, modelErr(dir, "fit with -method em, direct, em-paper or direct-paper", "method lle has no stochastic weights to generate from")
	}
	if sv.RegMode, err = parseRegMode(meta.RegMode); err != nil {
		return sv, meta, modelErr(dir, resave, "unknown reg_mode %q in %s", clip(meta.RegMode), metaFile)
	}
	if sv.Scaling, err = parseScaling(meta.Scaling); err != nil {
		return sv, meta, modelErr(dir, resave, "unknown scaling %q in %s", clip(meta.Scaling), metaFile)
	}
	n, d, k, p := meta.N, meta.D, meta.K, meta.Dim
	if n < 2 || d < 1 || k < 1 || p < 1 || k >= n || p >= d || n > math.MaxInt32 || !finite(meta.Reg) || !finite(meta.DirectRidge) {
		return sv, meta, modelErr(dir, resave, "%s has an invalid shape or setting (n=%d d=%d k=%d dim=%d)", metaFile, n, d, k, p)
	}
	// embed writes the ridge it used, always positive; 0 would silently restore with the
	// library's default (1e-3) instead.
	if !(meta.Reg > 0) || meta.DirectRidge < 0 {
		return sv, meta, modelErr(dir, resave, "%s has reg %v and direct_ridge %v (want reg > 0, direct_ridge >= 0)", metaFile, meta.Reg, meta.DirectRidge)
	}
	sv.K, sv.Dim, sv.Reg, sv.DirectRidge, sv.Eigenvalues = k, p, meta.Reg, meta.DirectRidge, meta.Eigenvalues
	if !finite(meta.Shift) || meta.Shift > 0 {
		return sv, meta, modelErr(dir, resave, "%s has an invalid eigen_shift %v", metaFile, meta.Shift)
	}
	sv.Shift = meta.Shift

	// The files the method reads are exactly those model.json lists (an edited method left
	// sigma.npy unread, a user trial). Direct models saved before session 34 list gamma.npy
	// there too, which is informational (gammaFile).
	want := modelReadFiles(sv.Method)
	if listed := slices.DeleteFunc(slices.Clone(meta.Files), func(f string) bool { return f == gammaFile }); !sameSet(want, listed) {
		return sv, meta, modelErr(dir, resave, "%s lists the files %v, but %s %s model has %v: it was edited after the model was saved", metaFile, meta.Files, article(sv.Method.String()), sv.Method, want)
	}
	// read parses a file and, when model.json has checksums, hashes it in the same pass (sums).
	sums := map[string]string{}
	// model.json's own checksum, after the checks above name what they find; checked in any
	// version that has it (a user trial: format_version edited to 1 skipped it).
	if meta.FormatVersion >= 2 || meta.SettingsSum != "" {
		if meta.Checksums == nil || meta.SettingsSum == "" {
			return sv, meta, modelErr(dir, resave, "%s has no checksums or settings_checksum, which a version-2 model records: it was edited after the model was saved", metaFile)
		}
		if got, err := settingsSum(meta); err != nil || got != meta.SettingsSum {
			return sv, meta, modelErr(dir, resave, "%s does not match its settings_checksum: it was edited after the model was saved", metaFile)
		}
	}
	read := func(name string, shape []int, wantInt bool) (*dataio.Array, error) {
		path := modelFile(dir, name)
		var h hash.Hash
		if meta.Checksums != nil {
			h = sha256.New()
		}
		// Stat first: opening a named pipe would block (readMetaFile).
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, modelErr(dir, resave, "%s is not a regular file (a folder, pipe or device)", name)
		}
		a, err := dataio.ReadNPYFileTee(path, h)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if _, lerr := os.Lstat(path); lerr == nil {
					return nil, modelErr(dir, resave, "%s is a symbolic link to a file that does not exist", name)
				}
				return nil, modelErr(dir, resave, "%s is missing", name)
			}
			if errors.Is(err, fs.ErrPermission) {
				return nil, modelErr(dir, "check its permissions", "cannot read %s (permission denied)", name)
			}
			msg := strings.TrimPrefix(oneLine(unwrapPath(err).Error()), path+": ") // the model and the name say where
			return nil, modelErr(dir, resave, "%s is unreadable (%s)", name, msg)
		}
		if !equalShape(a.Shape, shape) {
			return nil, modelErr(dir, resave, "%s has shape %v, want %v (n=%d k=%d dim=%d in %s)", name, a.Shape, shape, n, k, p, metaFile)
		}
		if wantInt == a.IsFloat() {
			want := "float64"
			if wantInt {
				want = "integer"
			}
			return nil, modelErr(dir, resave, "%s is not an %s array", name, want)
		}
		if !wantInt {
			for _, v := range a.Float {
				if !finite(v) {
					return nil, modelErr(dir, resave, "%s holds a non-finite value", name)
				}
			}
		}
		if h != nil {
			sums[name] = sumString(h)
		}
		return a, nil
	}
	// verify runs after a file's content checks, so that they name what they find; it catches
	// the damage and edits they cannot see (models saved before session 35 have no checksums).
	verify := func(name string) error {
		if meta.Checksums == nil {
			return nil
		}
		if sums[name] != meta.Checksums[name] {
			return modelErr(dir, resave, "%s does not match its checksum in %s: the file was damaged or edited after the model was saved", name, metaFile)
		}
		return nil
	}
	a, err := read(neighborsFile, []int{n, k}, true)
	if err != nil {
		return sv, meta, err
	}
	sv.Neighbors = make([]int32, len(a.Int))
	for i, v := range a.Int {
		if v < 0 || v >= int64(n) || int(v) == i/k {
			return sv, meta, modelErr(dir, resave, "%s entry %d (point %d) is %d, outside [0, %d) or the point itself", neighborsFile, i, i/k, v, n)
		}
		sv.Neighbors[i] = int32(v)
	}
	if err := verify(neighborsFile); err != nil {
		return sv, meta, err
	}
	if a, err = read(weightsFile, []int{n, k}, false); err != nil {
		return sv, meta, err
	}
	if err := verify(weightsFile); err != nil {
		return sv, meta, err
	}
	sv.Weights = a.Float
	if sv.Method == engine.EM || sv.Method == engine.EMPaper {
		if a, err = read(sigmaFile, []int{n}, false); err != nil {
			return sv, meta, err
		}
		if err := verify(sigmaFile); err != nil {
			return sv, meta, err
		}
		sv.Sigma = a.Float
	}
	if a, err = read(embeddingFile, []int{n, p}, false); err != nil {
		return sv, meta, err
	}
	if err := verify(embeddingFile); err != nil {
		return sv, meta, err
	}
	sv.Embedding = mat.NewDense(n, p, a.Float)
	if a, err = read(dataFile, []int{n, d}, false); err != nil {
		return sv, meta, err
	}
	if err := verify(dataFile); err != nil {
		return sv, meta, err
	}
	sv.X = mat.NewDense(n, d, a.Float)
	return sv, meta, nil
}

// modelReadFiles lists the files of a model folder that generate and transform read for a
// model of method m (model.json's files).
func modelReadFiles(m engine.Method) []string {
	files := []string{neighborsFile, weightsFile, embeddingFile, dataFile}
	if m == engine.EM || m == engine.EMPaper {
		files = append(files, sigmaFile)
	}
	return files
}

// settingsSum returns the settings checksum of meta (SettingsSum): "sha256:HEX" of its
// compact JSON encoding with SettingsSum empty. The encoding of a decoded model.json is the
// one embed hashed (fields in declaration order, map keys sorted, float64 values in their
// shortest round-trip form); fields model.json holds beyond modelMeta's are not covered.
func settingsSum(meta modelMeta) (string, error) {
	meta.SettingsSum = ""
	b, err := json.Marshal(meta)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", metaFile, err)
	}
	h := sha256.New()
	h.Write(b)
	return sumString(h), nil
}

// uncheckedNote is the summary's note for a model read without checksums (format version 1):
// nothing vouches that its files and settings are the ones embed wrote.
func uncheckedNote(meta modelMeta, dir string) []string {
	if meta.Checksums != nil && meta.SettingsSum != "" {
		return nil
	}
	return []string{fmt.Sprintf("model %q has format version %d, without checksums: it was read unchecked (re-save it with 'glle-bench embed -model' to add them)", clip(dir), meta.FormatVersion)}
}

// jsonKind names a Go kind as the JSON value that decodes into it.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	default:
		return "an object"
	}
}

// article returns "an" before a word that starts with a vowel (em, lle is "an lle": el-el-ee),
// else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) || strings.HasPrefix(word, "lle") {
		return "an"
	}
	return "a"
}

// sumString returns "sha256:HEX" of what h (a SHA-256) has hashed: a checksum of model.json.
func sumString(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// rowMajor returns m's entries in row-major order: its own storage when that is contiguous,
// else a copy.
func rowMajor(m *mat.Dense) []float64 {
	raw := m.RawMatrix()
	if raw.Stride == raw.Cols || raw.Rows <= 1 {
		return raw.Data[:raw.Rows*raw.Cols]
	}
	out := make([]float64, 0, raw.Rows*raw.Cols)
	for i := 0; i < raw.Rows; i++ {
		out = append(out, m.RawRowView(i)...)
	}
	return out
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(s string) bool { return !slices.Contains(b, s) })
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
