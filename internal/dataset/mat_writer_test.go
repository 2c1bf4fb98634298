package dataset

import (
	"bytes"
	"encoding/binary"
	"math"
)

// matVar is a variable for writeMAT: rows×cols values, column-major, stored
// as data type typ of class class (numbers of the MAT-File Format tables).
type matVar struct {
	name       string
	class      uint32 // 6 double, 9 uint8, ...
	typ        uint32 // storage data type: miUINT8, miDOUBLE, ...
	rows, cols int32
	data       []float64
	flags      uint32 // extra array-flag bits (0x0800 complex)
	dims       []int32
}

// writeMAT writes a little-endian MAT-file v5 the way MATLAB does (header
// text, small-format names of up to 4 bytes, elements padded to 8 bytes).
// It is the independent writer the reader is tested against.
func writeMAT(vars ...matVar) []byte {
	var b bytes.Buffer
	hdr := make([]byte, 128)
	copy(hdr, "MATLAB 5.0 MAT-file, Platform: GLNXA64, written by the dgpviz tests")
	for i := len("MATLAB 5.0 MAT-file, Platform: GLNXA64, written by the dgpviz tests"); i < 116; i++ {
		hdr[i] = ' '
	}
	binary.LittleEndian.PutUint16(hdr[124:], 0x0100)
	copy(hdr[126:], "IM")
	b.Write(hdr)
	for _, v := range vars {
		var m bytes.Buffer
		flags := make([]byte, 8)
		binary.LittleEndian.PutUint32(flags, v.class|v.flags)
		matElem(&m, miUINT32, flags)
		dims := v.dims
		if dims == nil {
			dims = []int32{v.rows, v.cols}
		}
		db := make([]byte, 4*len(dims))
		for i, d := range dims {
			binary.LittleEndian.PutUint32(db[4*i:], uint32(d))
		}
		matElem(&m, miINT32, db)
		matElem(&m, miINT8, []byte(v.name))
		matElem(&m, v.typ, matEncode(v.typ, v.data))
		matElem(&b, miMATRIX, m.Bytes())
	}
	return b.Bytes()
}

// matElem writes one data element: the small format for at most 4 bytes
// (except matrices), otherwise a full tag and data padded to 8 bytes.
func matElem(b *bytes.Buffer, typ uint32, data []byte) {
	if len(data) <= 4 && len(data) > 0 && typ != miMATRIX {
		var t [8]byte
		binary.LittleEndian.PutUint32(t[:], typ|uint32(len(data))<<16)
		copy(t[4:], data)
		b.Write(t[:])
		return
	}
	var t [8]byte
	binary.LittleEndian.PutUint32(t[:], typ)
	binary.LittleEndian.PutUint32(t[4:], uint32(len(data)))
	b.Write(t[:])
	b.Write(data)
	b.Write(make([]byte, (8-len(data)%8)%8))
}

// matEncode encodes values as little-endian data type typ.
func matEncode(typ uint32, vals []float64) []byte {
	size := matElemSize[typ]
	out := make([]byte, size*len(vals))
	le := binary.LittleEndian
	for i, v := range vals {
		p := out[i*size:]
		switch typ {
		case miINT8:
			p[0] = byte(int8(v))
		case miUINT8:
			p[0] = byte(v)
		case miINT16:
			le.PutUint16(p, uint16(int16(v)))
		case miUINT16:
			le.PutUint16(p, uint16(v))
		case miINT32:
			le.PutUint32(p, uint32(int32(v)))
		case miUINT32:
			le.PutUint32(p, uint32(v))
		case miSINGLE:
			le.PutUint32(p, math.Float32bits(float32(v)))
		case miDOUBLE:
			le.PutUint64(p, math.Float64bits(v))
		case miINT64:
			le.PutUint64(p, uint64(int64(v)))
		case miUINT64:
			le.PutUint64(p, uint64(v))
		}
	}
	return out
}

// Parameters of the synthetic faces of the Frey fixture: a bright oval
// "face" on a dark background whose centre moves along a slow loop and
// whose "mouth" opens and closes, so consecutive frames are similar and
// the frames vary along two smooth directions, as in the video.
const (
	freyFixtureFrames = 60
	freyFixtureFile   = "testdata/frey_small.mat"
)

// freyFixtureData returns the fixture's frames, column-major 560×N grey
// levels in 8–238 like the real file.
func freyFixtureData() []float64 {
	data := make([]float64, 0, FreyPixels*freyFixtureFrames)
	for f := range freyFixtureFrames {
		t := 2 * math.Pi * float64(f) / freyFixtureFrames
		cx := 9.5 + 2.5*math.Cos(t)      // face centre column
		cy := 13.5 + 2*math.Sin(t)       // face centre row
		mouth := 0.5 + 0.5*math.Sin(3*t) // mouth opening 0–1
		for k := range FreyPixels {
			r, c := float64(k/FreyWidth), float64(k%FreyWidth)
			dx, dy := (c-cx)/7, (r-cy)/10
			v := 40 + 170*math.Exp(-2*(dx*dx+dy*dy)*(dx*dx+dy*dy))
			my := (r - (cy + 5)) / (0.6 + 1.5*mouth)
			mx := (c - cx) / 3
			v -= 120 * mouth * math.Exp(-(mx*mx + my*my))
			data = append(data, math.Round(min(238, max(8, v))))
		}
	}
	return data
}
