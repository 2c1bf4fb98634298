package engine

import (
	"flag"
	"math"
	"testing"
)

// The precision diagnosis (issue 13, item 2), run with -diag: where the
// later layers' gradients lose their digits at the default jitter.
//
// TestDiagnosePrecision compares, per layer with an uncertain input, the
// engine's ΣΨ2, Kuu, W = L⁻¹ and W·ΣΨ2·Wᵀ with big-float ones computed
// from the same float64 input message (so the messages' own errors,
// listed first, are left out), and W·ΣΨ2·Wᵀ from mixes of exact and
// rounded factors. TestDiagnoseConditioning measures how much the exact
// gradient itself moves when every parameter moves by ±1 ulp: the error
// that a backward-stable float64 algorithm could not avoid.

var diagFlag = flag.Bool("diag", false, "run the precision diagnosis (slow)")

// bigKuuW is Kuu and W = L⁻¹ in big floats; with round, Kuu's entries are
// rounded to float64 first.
func bigKuuW(lp *refLayerParams, jitter bf, round bool) (kuu, w [][]bf) {
	kuu = bigKuu(lp, jitter, round)
	_, w = bigCholInverse(kuu)
	return kuu, w
}

func bmatf(a []float64, m int) [][]bf {
	out := make([][]bf, m)
	for i := range m {
		out[i] = make([]bf, m)
		for j := range m {
			out[i][j] = bfl(a[i*m+j])
		}
	}
	return out
}

func roundM(a [][]bf) [][]bf {
	out := make([][]bf, len(a))
	for i := range a {
		out[i] = make([]bf, len(a[i]))
		for j := range a[i] {
			out[i][j] = bfl(bf64(a[i][j]))
		}
	}
	return out
}

// wxwt is W·x·Wᵀ in big floats.
func wxwt(w, x [][]bf) [][]bf {
	m := len(w)
	t := make([][]bf, m)
	for i := range m {
		t[i] = make([]bf, m)
		for j := range m {
			s := bnew()
			for k := range m {
				bacc(s, w[i][k], x[k][j])
			}
			t[i][j] = s
		}
	}
	out := make([][]bf, m)
	for i := range m {
		out[i] = make([]bf, m)
		for j := range m {
			s := bnew()
			for k := range m {
				bacc(s, t[i][k], w[j][k])
			}
			out[i][j] = s
		}
	}
	return out
}

// relErrM is max |eng − ref| / max |ref| and the error of the trace.
func relErrM(eng [][]bf, ref [][]bf) (float64, float64) {
	var d, s, trd float64
	for i := range ref {
		for j := range ref[i] {
			d = math.Max(d, math.Abs(bf64(bsub(eng[i][j], ref[i][j]))))
			s = math.Max(s, math.Abs(bf64(ref[i][j])))
		}
		trd += bf64(bsub(eng[i][i], ref[i][i]))
	}
	return d / s, trd
}

func TestDiagnosePrecision(t *testing.T) {
	if !*diagFlag {
		t.Skip("-diag")
	}
	for _, fm := range fittedModels(t) {
		path, m := fm.path, fm.model
		r, p, _, st := refBound(m)
		e := Evaluator{Workers: 1}
		if _, _, err := e.Evaluate(m, Options{Gradient: true}); err != nil {
			t.Fatal(err)
		}
		for li := 1; li < len(m.Layers); li++ {
			w := e.layers[li]
			n, mz, q := len(w.in)/w.q, w.m, w.q
			lp := r.params(li, p)
			// message error
			var dmean, dvar, smean, svar float64
			for i := range n {
				for k := range q {
					dmean = math.Max(dmean, math.Abs(w.in[i*q+k]-bf64(st.in[li].mean[i][k])))
					smean = math.Max(smean, math.Abs(bf64(st.in[li].mean[i][k])))
					dvar = math.Max(dvar, math.Abs(w.inVar[i*q+k]-bf64(st.in[li].vr[i][k])))
					svar = math.Max(svar, math.Abs(bf64(st.in[li].vr[i][k])))
				}
			}
			msg := refMsg{mean: make([][]bf, n), vr: make([][]bf, n)}
			for i := range n {
				for k := range q {
					msg.mean[i] = append(msg.mean[i], bfl(w.in[i*q+k]))
					msg.vr[i] = append(msg.vr[i], bfl(w.inVar[i*q+k]))
				}
			}
			ps := refPsiStats(&lp, msg)
			sum := make([][]bf, mz)
			sumR := make([][]bf, mz)
			for a := range mz {
				sum[a] = make([]bf, mz)
				sumR[a] = make([]bf, mz)
				for b := range mz {
					s, sr := bnew(), bnew()
					for i := range n {
						s.Add(s, ps.psi2[i][a][b])
						sr.Add(sr, bfl(bf64(ps.psi2[i][a][b])))
					}
					sum[a][b], sumR[a][b] = s, sr
				}
			}
			// ΣΨ2 from the reference's own message
			ps0 := st.psi[li]
			sum0 := make([][]bf, mz)
			for a := range mz {
				sum0[a] = make([]bf, mz)
				for b := range mz {
					s := bnew()
					for i := range n {
						s.Add(s, ps0.psi2[i][a][b])
					}
					sum0[a][b] = s
				}
			}
			kuu, wr := bigKuuW(&lp, r.jitter, false)
			_, wrk := bigKuuW(&lp, r.jitter, true)
			engSum := bmatf(w.sumPsi2, mz)
			engW := bmatf(w.lw, mz)
			engKuu := bmatf(w.kuu, mz)
			ref := wxwt(wr, sum)
			t.Logf("%s layer %d: n %d m %d; msg err mean %.2e var %.2e", path, li, n, mz, dmean/smean, dvar/svar)
			e1, _ := relErrM(engSum, sum)
			e1c, _ := relErrM(bmatf2(w.sumPsi2, w.sumPsi2Lo, mz), sum)
			e2, _ := relErrM(sumR, sum)
			e3, _ := relErrM(sum, sum0)
			t.Logf("  ΣΨ2: engine hi %.2e, hi + lo %.2e; exact sum of rounded entries %.2e; message error's effect %.2e", e1, e1c, e2, e3)
			e4, _ := relErrM(engKuu, kuu)
			e5, _ := relErrM(engW, wr)
			e6, _ := relErrM(roundM(wrk), wr)
			t.Logf("  Kuu engine %.2e; W engine %.2e; W of rounded Kuu %.2e", e4, e5, e6)
			show := func(name string, x [][]bf) {
				d, tr := relErrM(x, ref)
				t.Logf("  W·ΣΨ2·Wᵀ %-40s rel %.2e, trace abs %.2e", name, d, tr)
			}
			show("engine (compensated ΣΨ2 hi + lo)", bmatf(w.psi2W, mz))
			show("engine W, engine ΣΨ2 hi + lo (exact arith)", wxwt(engW, bmatf2(w.sumPsi2, w.sumPsi2Lo, mz)))
			show("exact W, engine ΣΨ2 hi", wxwt(wr, engSum))
			show("exact W, rounded exact ΣΨ2", wxwt(wr, roundM(sum)))
			show("exact W, exact sum of rounded Ψ2_n", wxwt(wr, sumR))
			show("engine W, exact ΣΨ2", wxwt(engW, sum))
			show("W of rounded Kuu, exact ΣΨ2", wxwt(wrk, sum))
			show("W of rounded Kuu, rounded ΣΨ2", wxwt(wrk, roundM(sum)))
			show("engine W, engine ΣΨ2 hi (exact arith)", wxwt(engW, engSum))
			// f64 arithmetic with exact inputs
			tmp := make([]float64, mz*mz)
			out := make([]float64, mz*mz)
			wsave, wtsave := w.lw, w.lwT
			wf := make([]float64, mz*mz)
			wft := make([]float64, mz*mz)
			for i := range mz {
				for j := range mz {
					wf[i*mz+j] = bf64(wr[i][j])
					wft[j*mz+i] = wf[i*mz+j]
				}
			}
			sf := make([]float64, mz*mz)
			for i := range mz {
				for j := range mz {
					sf[i*mz+j] = bf64(sum[i][j])
				}
			}
			w.lw, w.lwT = wf, wft
			w.whiten(out, sf, tmp)
			show("f64 whiten of rounded exact W, ΣΨ2", bmatf(out, mz))
			w.lw, w.lwT = wsave, wtsave
		}
	}
}

// TestDiagnoseConditioning: the reference gradient's change when every
// parameter moves by a random ±1 ulp (relative 2^-52): the error a
// backward-stable float64 algorithm cannot avoid.
func TestDiagnoseConditioning(t *testing.T) {
	if !*diagFlag {
		t.Skip("-diag")
	}
	for _, path := range precisionFixtures {
		mf, err := readFixture(path)
		if err != nil {
			t.Fatal(err)
		}
		m := mf.Model
		r, p, _, st := refBound(m)
		_, g := mustEval(t, m, Options{Gradient: true})
		which := sampleParams(r, g.Flatten(nil), 3)
		ref := refGradient(r, p, st, -40, which)
		seed := uint64(12345)
		p2 := make([]bf, len(p))
		for k := range p {
			seed = seed*6364136223846793005 + 1442695040888963407
			s := 1.0
			if seed>>63 == 1 {
				s = -1
			}
			v := bf64(p[k])
			p2[k] = bfl(v * (1 + s*0x1p-52))
		}
		b2, st2 := r.eval(p2, nil, 0, false)
		_ = b2
		ref2 := refGradient(r, p2, st2, -40, which)
		for _, e := range groupErrors(r, ref2, ref) {
			t.Logf("%s: ±1ulp params: %v", path, e)
		}
	}
}

// bmatf2 is the M×M matrix hi + lo, added in big floats.
func bmatf2(hi, lo []float64, m int) [][]bf {
	out := bmatf(hi, m)
	for i := range m {
		for j := range m {
			out[i][j] = badd(out[i][j], bfl(lo[i*m+j]))
		}
	}
	return out
}
