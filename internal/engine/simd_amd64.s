//go:build amd64 && !purego

#include "textflag.h"

// AVX2 + FMA kernels: a vector exp, the Ψ2 pair loop and a 4×8 block
// matrix product. Go declarations and the pure Go equivalents:
// simd_amd64.go, exp.go, rbf.go (pairsGo), linalg.go (gemmNN, mm).

// expc holds the exp constants, four copies each (one ymm register).
// 0: -746: inputs below give 0
DATA expc<>+0(SB)/8, $0xc087500000000000
DATA expc<>+8(SB)/8, $0xc087500000000000
DATA expc<>+16(SB)/8, $0xc087500000000000
DATA expc<>+24(SB)/8, $0xc087500000000000
// 32: 710: inputs above give +Inf
DATA expc<>+32(SB)/8, $0x4086300000000000
DATA expc<>+40(SB)/8, $0x4086300000000000
DATA expc<>+48(SB)/8, $0x4086300000000000
DATA expc<>+56(SB)/8, $0x4086300000000000
// 64: 1/ln 2
DATA expc<>+64(SB)/8, $0x3ff71547652b82fe
DATA expc<>+72(SB)/8, $0x3ff71547652b82fe
DATA expc<>+80(SB)/8, $0x3ff71547652b82fe
DATA expc<>+88(SB)/8, $0x3ff71547652b82fe
// 96: 1.5·2^52: adding it rounds to an integer
DATA expc<>+96(SB)/8, $0x4338000000000000
DATA expc<>+104(SB)/8, $0x4338000000000000
DATA expc<>+112(SB)/8, $0x4338000000000000
DATA expc<>+120(SB)/8, $0x4338000000000000
// 128: ln 2, head (fdlibm; k·head is exact)
DATA expc<>+128(SB)/8, $0x3fe62e42fee00000
DATA expc<>+136(SB)/8, $0x3fe62e42fee00000
DATA expc<>+144(SB)/8, $0x3fe62e42fee00000
DATA expc<>+152(SB)/8, $0x3fe62e42fee00000
// 160: ln 2, tail
DATA expc<>+160(SB)/8, $0x3dea39ef35793c76
DATA expc<>+168(SB)/8, $0x3dea39ef35793c76
DATA expc<>+176(SB)/8, $0x3dea39ef35793c76
DATA expc<>+184(SB)/8, $0x3dea39ef35793c76
// 192: 0.5
DATA expc<>+192(SB)/8, $0x3fe0000000000000
DATA expc<>+200(SB)/8, $0x3fe0000000000000
DATA expc<>+208(SB)/8, $0x3fe0000000000000
DATA expc<>+216(SB)/8, $0x3fe0000000000000
// 224: bits(1.5·2^52) − 1023, to turn k + 1.5·2^52 into a biased exponent
DATA expc<>+224(SB)/8, $0x4337fffffffffc01
DATA expc<>+232(SB)/8, $0x4337fffffffffc01
DATA expc<>+240(SB)/8, $0x4337fffffffffc01
DATA expc<>+248(SB)/8, $0x4337fffffffffc01
// 256: 1/13!
DATA expc<>+256(SB)/8, $0x3de6124613a86d09
DATA expc<>+264(SB)/8, $0x3de6124613a86d09
DATA expc<>+272(SB)/8, $0x3de6124613a86d09
DATA expc<>+280(SB)/8, $0x3de6124613a86d09
// 288: 1/12!
DATA expc<>+288(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+296(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+304(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+312(SB)/8, $0x3e21eed8eff8d898
// 320: 1/11!
DATA expc<>+320(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+328(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+336(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+344(SB)/8, $0x3e5ae64567f544e4
// 352: 1/10!
DATA expc<>+352(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+360(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+368(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+376(SB)/8, $0x3e927e4fb7789f5c
// 384: 1/9!
DATA expc<>+384(SB)/8, $0x3ec71de3a556c734
DATA expc<>+392(SB)/8, $0x3ec71de3a556c734
DATA expc<>+400(SB)/8, $0x3ec71de3a556c734
DATA expc<>+408(SB)/8, $0x3ec71de3a556c734
// 416: 1/8!
DATA expc<>+416(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+424(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+432(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+440(SB)/8, $0x3efa01a01a01a01a
// 448: 1/7!
DATA expc<>+448(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+456(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+464(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+472(SB)/8, $0x3f2a01a01a01a01a
// 480: 1/6!
DATA expc<>+480(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+488(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+496(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+504(SB)/8, $0x3f56c16c16c16c17
// 512: 1/5!
DATA expc<>+512(SB)/8, $0x3f81111111111111
DATA expc<>+520(SB)/8, $0x3f81111111111111
DATA expc<>+528(SB)/8, $0x3f81111111111111
DATA expc<>+536(SB)/8, $0x3f81111111111111
// 544: 1/4!
DATA expc<>+544(SB)/8, $0x3fa5555555555555
DATA expc<>+552(SB)/8, $0x3fa5555555555555
DATA expc<>+560(SB)/8, $0x3fa5555555555555
DATA expc<>+568(SB)/8, $0x3fa5555555555555
// 576: 1/3!
DATA expc<>+576(SB)/8, $0x3fc5555555555555
DATA expc<>+584(SB)/8, $0x3fc5555555555555
DATA expc<>+592(SB)/8, $0x3fc5555555555555
DATA expc<>+600(SB)/8, $0x3fc5555555555555
// 608: 1/2!
DATA expc<>+608(SB)/8, $0x3fe0000000000000
DATA expc<>+616(SB)/8, $0x3fe0000000000000
DATA expc<>+624(SB)/8, $0x3fe0000000000000
DATA expc<>+632(SB)/8, $0x3fe0000000000000
// 640: 1/1!
DATA expc<>+640(SB)/8, $0x3ff0000000000000
DATA expc<>+648(SB)/8, $0x3ff0000000000000
DATA expc<>+656(SB)/8, $0x3ff0000000000000
DATA expc<>+664(SB)/8, $0x3ff0000000000000
// 672: 1/0!
DATA expc<>+672(SB)/8, $0x3ff0000000000000
DATA expc<>+680(SB)/8, $0x3ff0000000000000
DATA expc<>+688(SB)/8, $0x3ff0000000000000
DATA expc<>+696(SB)/8, $0x3ff0000000000000
GLOBL expc<>(SB), RODATA|NOPTR, $704

// EXPY0 replaces the four doubles in Y0 by their exponentials, using Y1–Y4.
// x is clamped to [−746, 710] (NaN passes through: VMAXPD and VMINPD
// return their second source, x, when either is NaN), written as
// x = k·ln2 + r with |r| ≤ ln2/2, e^r comes from its Taylor polynomial of
// degree 13 (truncation < 5e-18 relative), evaluated as E(r²) + r·O(r²)
// so that two chains of six multiply-adds run side by side, and 2^k is
// applied as 2^⌊k/2⌋·2^(k−⌊k/2⌋) so that subnormal results and overflow
// to +Inf come out right.
#define EXPY0 \
	VMOVUPD      expc<>+0(SB), Y1; \
	VMAXPD       Y0, Y1, Y0; \
	VMOVUPD      expc<>+32(SB), Y1; \
	VMINPD       Y0, Y1, Y0; \
	VMOVUPD      expc<>+96(SB), Y3; \
	VFMADD231PD  expc<>+64(SB), Y0, Y3; \
	VSUBPD       expc<>+96(SB), Y3, Y3; \
	VFNMADD231PD expc<>+128(SB), Y3, Y0; \
	VFNMADD231PD expc<>+160(SB), Y3, Y0; \
	VMULPD       Y0, Y0, Y4; \
	VMOVUPD      expc<>+288(SB), Y1; \
	VMOVUPD      expc<>+256(SB), Y2; \
	VFMADD213PD  expc<>+352(SB), Y4, Y1; \
	VFMADD213PD  expc<>+320(SB), Y4, Y2; \
	VFMADD213PD  expc<>+416(SB), Y4, Y1; \
	VFMADD213PD  expc<>+384(SB), Y4, Y2; \
	VFMADD213PD  expc<>+480(SB), Y4, Y1; \
	VFMADD213PD  expc<>+448(SB), Y4, Y2; \
	VFMADD213PD  expc<>+544(SB), Y4, Y1; \
	VFMADD213PD  expc<>+512(SB), Y4, Y2; \
	VFMADD213PD  expc<>+608(SB), Y4, Y1; \
	VFMADD213PD  expc<>+576(SB), Y4, Y2; \
	VFMADD213PD  expc<>+672(SB), Y4, Y1; \
	VFMADD213PD  expc<>+640(SB), Y4, Y2; \
	VFMADD231PD  Y2, Y0, Y1; \
	VMULPD       expc<>+192(SB), Y3, Y0; \
	VROUNDPD     $1, Y0, Y0; \
	VSUBPD       Y0, Y3, Y3; \
	VADDPD       expc<>+96(SB), Y0, Y0; \
	VPSUBQ       expc<>+224(SB), Y0, Y0; \
	VPSLLQ       $52, Y0, Y0; \
	VADDPD       expc<>+96(SB), Y3, Y3; \
	VPSUBQ       expc<>+224(SB), Y3, Y3; \
	VPSLLQ       $52, Y3, Y3; \
	VMULPD       Y0, Y1, Y1; \
	VMULPD       Y3, Y1, Y0

// func expAVX2(x *float64, n int)
TEXT ·expAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), BX
	XORQ AX, AX

loop:
	CMPQ    AX, BX
	JGE     done
	VMOVUPD (SI)(AX*8), Y0
	EXPY0
	VMOVUPD Y0, (SI)(AX*8)
	ADDQ    $4, AX
	JMP     loop

done:
	VZEROUPPER
	RET

// The pair kernels' memory, in blocks of four pairs (one ymm register per
// row), q the input dimension:
//   tab, per block: ez | w1 | w2 | wg | z̄_0 … z̄_{q−1}
//   acc, per block: ΣΨ2 | lo | zP_0 … zP_{q−1}
//   par: pre | μ_0 | inv_0 | μ_1 | inv_1 …, each broadcast to four lanes
//   lanes (out): t1 | t2 | sc | dm_0 | sq_0 | dm_1 | sq_1 …, four lanes each
// Per pair: v = pre·exp(ez − Σ_r (μ_r − z̄_r)²·inv_r), with sum ΣΨ2 += v
// (without, ΣΨ2 and its low part are left to rbfPsi2.sumExact),
// t1 += w1·v, t2 += w2·v and, with grad, c = wg·v, sc += c and per
// dimension d = μ_r − z̄_r, e = c·d: dm_r += e, sq_r += e·d,
// zP_r += e·inv_r.

// func psi2Pairs3AVX2(tab, acc, par, lanes *float64, blocks, q int, grad, sum bool)
//
// For q ≤ 3, with every sum in a register: Y7 t1, Y8 t2, Y9 sc, Y10–Y15
// dm_0, sq_0, dm_1, sq_1, dm_2, sq_2. It writes all 36 lanes.
TEXT ·psi2Pairs3AVX2(SB), NOSPLIT, $0-50
	MOVQ   tab+0(FP), SI
	MOVQ   acc+8(FP), DI
	MOVQ   par+16(FP), R8
	MOVQ   blocks+32(FP), BX
	MOVQ   q+40(FP), R9
	MOVBQZX grad+48(FP), R12
	LEAQ   4(R9), R10
	SHLQ   $5, R10                // bytes per block of tab
	LEAQ   2(R9), R11
	SHLQ   $5, R11                // bytes per block of acc
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15
	TESTQ  BX, BX
	JZ     p3done

p3block:
	VMOVUPD      (SI), Y0         // ez
	VMOVUPD      32(R8), Y4
	VSUBPD       128(SI), Y4, Y4  // μ_0 − z̄_0
	VMULPD       Y4, Y4, Y4
	VFNMADD231PD 64(R8), Y4, Y0
	CMPQ         R9, $2
	JLT          p3exp
	VMOVUPD      96(R8), Y4
	VSUBPD       160(SI), Y4, Y4
	VMULPD       Y4, Y4, Y4
	VFNMADD231PD 128(R8), Y4, Y0
	CMPQ         R9, $3
	JLT          p3exp
	VMOVUPD      160(R8), Y4
	VSUBPD       192(SI), Y4, Y4
	VMULPD       Y4, Y4, Y4
	VFNMADD231PD 192(R8), Y4, Y0

p3exp:
	EXPY0
	VMULPD      (R8), Y0, Y0      // v
	CMPB        sum+49(FP), $0
	JEQ         p3summed
	VADDPD      (DI), Y0, Y4
	VMOVUPD     Y4, (DI)

p3summed:
	VFMADD231PD 32(SI), Y0, Y7
	VFMADD231PD 64(SI), Y0, Y8
	TESTQ       R12, R12
	JZ          p3next
	VMULPD      96(SI), Y0, Y5    // c
	VADDPD      Y5, Y9, Y9
	VMOVUPD     32(R8), Y4
	VSUBPD      128(SI), Y4, Y4   // d
	VMULPD      Y4, Y5, Y6        // e
	VADDPD      Y6, Y10, Y10
	VFMADD231PD Y4, Y6, Y11
	VMOVUPD     64(DI), Y4
	VFMADD231PD 64(R8), Y6, Y4
	VMOVUPD     Y4, 64(DI)
	CMPQ        R9, $2
	JLT         p3next
	VMOVUPD     96(R8), Y4
	VSUBPD      160(SI), Y4, Y4
	VMULPD      Y4, Y5, Y6
	VADDPD      Y6, Y12, Y12
	VFMADD231PD Y4, Y6, Y13
	VMOVUPD     96(DI), Y4
	VFMADD231PD 128(R8), Y6, Y4
	VMOVUPD     Y4, 96(DI)
	CMPQ        R9, $3
	JLT         p3next
	VMOVUPD     160(R8), Y4
	VSUBPD      192(SI), Y4, Y4
	VMULPD      Y4, Y5, Y6
	VADDPD      Y6, Y14, Y14
	VFMADD231PD Y4, Y6, Y15
	VMOVUPD     128(DI), Y4
	VFMADD231PD 192(R8), Y6, Y4
	VMOVUPD     Y4, 128(DI)

p3next:
	ADDQ R10, SI
	ADDQ R11, DI
	DECQ BX
	JNZ  p3block

p3done:
	MOVQ    lanes+24(FP), AX
	VMOVUPD Y7, (AX)
	VMOVUPD Y8, 32(AX)
	VMOVUPD Y9, 64(AX)
	VMOVUPD Y10, 96(AX)
	VMOVUPD Y11, 128(AX)
	VMOVUPD Y12, 160(AX)
	VMOVUPD Y13, 192(AX)
	VMOVUPD Y14, 224(AX)
	VMOVUPD Y15, 256(AX)
	VZEROUPPER
	RET

// func psi2PairsAVX2(tab, acc, par, lanes *float64, blocks, q int, grad, sum bool)
//
// Any q ≥ 1: loops over the dimensions, with dm_r and sq_r summed in
// lanes, whose dm and sq part the caller zeroes.
TEXT ·psi2PairsAVX2(SB), NOSPLIT, $0-50
	MOVQ    tab+0(FP), SI
	MOVQ    acc+8(FP), DI
	MOVQ    par+16(FP), R8
	MOVQ    lanes+24(FP), DX
	MOVQ    blocks+32(FP), BX
	MOVQ    q+40(FP), R9
	LEAQ    4(R9), R10
	SHLQ    $5, R10               // bytes per block of tab
	LEAQ    2(R9), R11
	SHLQ    $5, R11               // bytes per block of acc
	VMOVUPD (R8), Y15             // pre
	VXORPD  Y12, Y12, Y12         // t1
	VXORPD  Y13, Y13, Y13         // t2
	VXORPD  Y14, Y14, Y14         // sc
	TESTQ   BX, BX
	JZ      pdone

pblock:
	VMOVUPD (SI), Y0              // ez
	LEAQ    128(SI), R12          // z̄_0
	LEAQ    32(R8), R13           // μ_0, and inv_0 at 32(R13)
	MOVQ    R9, CX

pexponent:
	VMOVUPD      (R13), Y4
	VSUBPD       (R12), Y4, Y4    // μ_r − z̄_r
	VMULPD       Y4, Y4, Y4
	VFNMADD231PD 32(R13), Y4, Y0
	ADDQ         $32, R12
	ADDQ         $64, R13
	DECQ         CX
	JNZ          pexponent

	EXPY0
	VMULPD      Y15, Y0, Y0       // v
	CMPB        sum+49(FP), $0
	JEQ         psummed
	VADDPD      (DI), Y0, Y4
	VMOVUPD     Y4, (DI)

psummed:
	VFMADD231PD 32(SI), Y0, Y12
	VFMADD231PD 64(SI), Y0, Y13
	CMPB        grad+48(FP), $0
	JEQ         pnext
	VMULPD      96(SI), Y0, Y5    // c
	VADDPD      Y5, Y14, Y14
	LEAQ        128(SI), R12      // z̄_0
	LEAQ        32(R8), R13       // μ_0, inv_0
	LEAQ        64(DI), R14       // zP_0
	LEAQ        96(DX), AX       // dm_0's lanes, sq_0's at 32(AX)
	MOVQ        R9, CX

pgradient:
	VMOVUPD     (R13), Y4
	VSUBPD      (R12), Y4, Y4     // d
	VMULPD      Y4, Y5, Y6        // e
	VADDPD      (AX), Y6, Y7
	VMOVUPD     Y7, (AX)
	VMOVUPD     32(AX), Y7
	VFMADD231PD Y4, Y6, Y7
	VMOVUPD     Y7, 32(AX)
	VMOVUPD     (R14), Y7
	VFMADD231PD 32(R13), Y6, Y7
	VMOVUPD     Y7, (R14)
	ADDQ        $32, R12
	ADDQ        $64, R13
	ADDQ        $32, R14
	ADDQ        $64, AX
	DECQ        CX
	JNZ         pgradient

pnext:
	ADDQ R10, SI
	ADDQ R11, DI
	DECQ BX
	JNZ  pblock

pdone:
	VMOVUPD Y12, (DX)
	VMOVUPD Y13, 32(DX)
	VMOVUPD Y14, 64(DX)
	VZEROUPPER
	RET

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// func gemmAVX2(m, n, k int, alpha float64, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// C += alpha·A·B for row-major A (m×k), B (k×n), C (m×n) with leading
// dimensions in elements; m a multiple of 4, n of 8, k ≥ 1. Each block of
// 4 rows × 8 columns of C is summed in eight registers over the k
// products, then added to C once.
TEXT ·gemmAVX2(SB), NOSPLIT, $0-80
	MOVQ         a+32(FP), R8
	MOVQ         lda+40(FP), R9
	SHLQ         $3, R9
	MOVQ         b+48(FP), R10
	MOVQ         ldb+56(FP), R11
	SHLQ         $3, R11
	MOVQ         c+64(FP), R12
	MOVQ         ldc+72(FP), R13
	SHLQ         $3, R13
	MOVQ         k+16(FP), BX
	VBROADCASTSD alpha+24(FP), Y15
	XORQ         SI, SI           // first row of the block

rows:
	CMPQ SI, m+0(FP)
	JGE  gemmdone
	XORQ DI, DI                   // first column of the block

cols:
	CMPQ   DI, n+8(FP)
	JGE    nextrows
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ   SI, AX
	IMULQ  R9, AX
	ADDQ   R8, AX                 // &A[i][0]
	LEAQ   (R10)(DI*8), CX        // &B[0][j]
	MOVQ   BX, DX

inner:
	VMOVUPD      (CX), Y8
	VMOVUPD      32(CX), Y9
	VBROADCASTSD (AX), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD (AX)(R9*1), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	LEAQ         (AX)(R9*2), R14
	VBROADCASTSD (R14), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD (R14)(R9*1), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         $8, AX
	ADDQ         R11, CX
	DECQ         DX
	JNZ          inner

	MOVQ        SI, R14
	IMULQ       R13, R14
	ADDQ        R12, R14
	LEAQ        (R14)(DI*8), R14  // &C[i][j]
	VMOVUPD     (R14), Y8
	VMOVUPD     32(R14), Y9
	VFMADD231PD Y0, Y15, Y8
	VFMADD231PD Y1, Y15, Y9
	VMOVUPD     Y8, (R14)
	VMOVUPD     Y9, 32(R14)
	ADDQ        R13, R14
	VMOVUPD     (R14), Y8
	VMOVUPD     32(R14), Y9
	VFMADD231PD Y2, Y15, Y8
	VFMADD231PD Y3, Y15, Y9
	VMOVUPD     Y8, (R14)
	VMOVUPD     Y9, 32(R14)
	ADDQ        R13, R14
	VMOVUPD     (R14), Y8
	VMOVUPD     32(R14), Y9
	VFMADD231PD Y4, Y15, Y8
	VFMADD231PD Y5, Y15, Y9
	VMOVUPD     Y8, (R14)
	VMOVUPD     Y9, 32(R14)
	ADDQ        R13, R14
	VMOVUPD     (R14), Y8
	VMOVUPD     32(R14), Y9
	VFMADD231PD Y6, Y15, Y8
	VFMADD231PD Y7, Y15, Y9
	VMOVUPD     Y8, (R14)
	VMOVUPD     Y9, 32(R14)
	ADDQ        $8, DI
	JMP         cols

nextrows:
	ADDQ $4, SI
	JMP  rows

gemmdone:
	VZEROUPPER
	RET
