package kernels

import "math"

// Stream is a counter-based random stream: its output depends only on its key and on how
// many numbers were taken, never on the goroutine or the order in which streams are used.
// The key mixes (seed, generation, point) with the SplitMix64 finaliser; each output is the
// finaliser applied to key + counter * golden ratio (SplitMix64 as a counter-based generator).
type Stream struct {
	key, ctr uint64
}

const golden = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// NewStream returns the stream keyed by (seed, generation, point).
func NewStream(seed uint64, generation, point int) Stream {
	k := mix64(seed + golden)
	k = mix64(k ^ (uint64(generation)+1)*0xD1B54A32D192ED03)
	k = mix64(k ^ (uint64(point)+1)*0x8CB92BA72F3D8DD7)
	return Stream{key: k}
}

// Uint64 returns the next 64 random bits.
func (s *Stream) Uint64() uint64 {
	s.ctr++
	return mix64(s.key + s.ctr*golden)
}

// Float64 returns a uniform number in the open interval (0, 1).
func (s *Stream) Float64() float64 {
	return (float64(s.Uint64()>>11) + 0.5) / (1 << 53)
}

// Normals fills dst with independent standard normal numbers (Box-Muller on pairs).
func (s *Stream) Normals(dst []float64) {
	for i := 0; i < len(dst); i += 2 {
		u1, u2 := s.Float64(), s.Float64()
		r := math.Sqrt(-2 * math.Log(u1))
		sn, cs := math.Sincos(2 * math.Pi * u2)
		dst[i] = r * cs
		if i+1 < len(dst) {
			dst[i+1] = r * sn
		}
	}
}
