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

// Normals fills dst with independent standard normal numbers: the ziggurat method of Marsaglia
// and Tsang ("The ziggurat method for generating random variables", J. Stat. Softw. 5(8), 2000)
// with 128 layers, two 32-bit draws per Uint64 (the high half unused for the last of an odd
// count). About 99% of the draws return from the first comparison; the rest take the wedge or
// tail tests, which consume further numbers of the same stream (so the output is still a
// function of the key alone).
func (s *Stream) Normals(dst []float64) {
	for i := 0; i < len(dst); i += 2 {
		b := s.Uint64()
		hz := int32(uint32(b))
		iz := hz & 127
		if abs32(hz) < zigK[iz] {
			dst[i] = float64(hz) * zigW[iz]
		} else {
			dst[i] = s.normalSlow(hz, iz)
		}
		if i+1 == len(dst) {
			break
		}
		hz = int32(uint32(b >> 32))
		iz = hz & 127
		if abs32(hz) < zigK[iz] {
			dst[i+1] = float64(hz) * zigW[iz]
		} else {
			dst[i+1] = s.normalSlow(hz, iz)
		}
	}
}

// normalSlow finishes a ziggurat draw that fell outside its layer's rectangle core: the base
// layer's tail beyond zigR (Marsaglia's exponential method) or a wedge test against the
// density, retrying with new draws of the stream.
func (s *Stream) normalSlow(hz, iz int32) float64 {
	for {
		x := float64(hz) * zigW[iz]
		if iz == 0 {
			for {
				x = -math.Log(s.Float64()) / zigR
				y := -math.Log(s.Float64())
				if y+y >= x*x {
					break
				}
			}
			if hz > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if zigF[iz]+s.Float64()*(zigF[iz-1]-zigF[iz]) < math.Exp(-0.5*x*x) {
			return x
		}
		hz = int32(uint32(s.Uint64()))
		iz = hz & 127
		if abs32(hz) < zigK[iz] {
			return float64(hz) * zigW[iz]
		}
	}
}

// abs32 returns |x| without a branch: the sign of a random draw is a coin flip, which a
// branch would mispredict half the time.
func abs32(x int32) int64 {
	v := int64(x)
	m := v >> 63
	return (v ^ m) - m
}

// The ziggurat's tables for the standard normal density exp(-x^2/2) with 128 layers of area
// zigV each; zigR is the right edge of the base layer (Marsaglia and Tsang's constants).
const (
	zigR = 3.442619855899
	zigV = 9.91256303526217e-3
)

var (
	zigK [128]int64   // |hz| below zigK[i] lies inside layer i's rectangle core
	zigW [128]float64 // x = hz * zigW[i]
	zigF [128]float64 // the density at layer i's right edge
)

func init() {
	const m = 1 << 31
	dn := zigR
	tn := dn
	q := zigV / math.Exp(-0.5*dn*dn)
	zigK[0] = int64(dn / q * m)
	zigK[1] = 0
	zigW[0] = q / m
	zigW[127] = dn / m
	zigF[0] = 1
	zigF[127] = math.Exp(-0.5 * dn * dn)
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(zigV/dn+math.Exp(-0.5*dn*dn)))
		zigK[i+1] = int64(dn / tn * m)
		tn = dn
		zigF[i] = math.Exp(-0.5 * dn * dn)
		zigW[i] = dn / m
	}
}
