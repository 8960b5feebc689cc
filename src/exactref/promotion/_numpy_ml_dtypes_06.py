"""numpy's promotion tables with ml_dtypes 0.6 (numpy 2.4.6, ml_dtypes 0.6.0; 0.5.4 gives the
same cells on every dtype it has), as measured: the pair tables of np.add, the casts, and the
cells where a ufunc departs from them. :mod:`exactref.promotion._numpy` folds them (its
``CODE`` names the short codes); :mod:`exactref.promotion._numpy_ml_dtypes_07` has the tables of
ml_dtypes 0.7 in the same layout.
"""

__all__ = ["STRONG", "WEAK", "CAN_CAST_SAFE", "CAN_CAST_SAME_KIND", "UFUNC_EXCEPTIONS"]

#: What np.add returns for two strong operands (row, column), with ml_dtypes 0.6 (and 0.5).
STRONG = """
         b1       i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     e8m0     e2m3     e3m2     e2m1     int1     int2     int4     uint1    uint2    uint4    c32      bc32
b1       b1       i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     e8m0     e2m3     e3m2     e2m1     int1     int2     int4     uint1    uint2    uint4    c32      bc32
i1       i1       i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     e8m0     e2m3     e3m2     e2m1     i1       i1       i1       i1       i1       i1       c32      bc32
i2       i2       i2       i2       i4       i8       i2       i4       i8       f8       f4       f4       f8       c8       c16      f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       i2       i2       i2       i2       i2       i2       c8       c8
i4       i4       i4       i4       i4       i8       i4       i4       i8       f8       f8       f8       f8       c16      c16      f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       i4       i4       i4       i4       i4       i4       c16      c16
i8       i8       i8       i8       i8       i8       i8       i8       i8       f8       f8       f8       f8       c16      c16      f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       i8       i8       i8       i8       i8       i8       c16      c16
u1       u1       i2       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     e8m0     e2m3     e3m2     e2m1     i2       i2       i2       u1       u1       u1       c32      bc32
u2       u2       i4       i4       i4       i8       u2       u2       u4       u8       f4       f4       f8       c8       c16      f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       i4       i4       i4       u2       u2       u2       c8       c8
u4       u4       i8       i8       i8       i8       u4       u4       u4       u8       f8       f8       f8       c16      c16      f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       i8       i8       i8       u4       u4       u4       c16      c16
u8       u8       f8       f8       f8       f8       u8       u8       u8       u8       f8       f8       f8       c16      c16      f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       u8       u8       u8       c16      c16
f2       f2       f2       f4       f8       f8       f2       f4       f8       f8       f2       f4       f8       c8       c16      f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f2       f2       f2       f2       f2       f2       c8       c8
f4       f4       f4       f4       f8       f8       f4       f4       f8       f8       f4       f4       f8       c8       c16      f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       c8       c8
f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       c16      c16      f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       f8       c16      c16
c8       c8       c8       c8       c16      c16      c8       c8       c16      c16      c8       c8       c16      c8       c16      c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8
c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16      c16
bf16     bf16     bf16     f4       f8       f8       bf16     f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       c8       c8
e4m3fn   e4m3fn   e4m3fn   f4       f8       f8       e4m3fn   f4       f8       f8       f4       f4       f8       c8       c16      f4       e4m3fn   e4m3fn   f4       e4m3fn   e4m3fn   e4m3fn   e4m3fn   f4       e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   c8       c8
e4m3fnuz e4m3fnuz e4m3fnuz f4       f8       f8       e4m3fnuz f4       f8       f8       f4       f4       f8       c8       c16      f4       e4m3fnuz e4m3fnuz f4       e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz f4       e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz c8       c8
e5m2     e5m2     e5m2     f4       f8       f8       e5m2     f4       f8       f8       f4       f4       f8       c8       c16      f4       f4       f4       e5m2     f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       c8       c8
e5m2fnuz e5m2fnuz e5m2fnuz f4       f8       f8       e5m2fnuz f4       f8       f8       f4       f4       f8       c8       c16      f4       e5m2fnuz e5m2fnuz f4       e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz f4       e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz c8       c8
e4m3b11  e4m3b11  e4m3b11  f4       f8       f8       e4m3b11  f4       f8       f8       f4       f4       f8       c8       c16      f4       e4m3b11  e4m3b11  f4       e4m3b11  e4m3b11  e4m3b11  e4m3b11  f4       e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  c8       c8
e3m4     e3m4     e3m4     f4       f8       f8       e3m4     f4       f8       f8       f4       f4       f8       c8       c16      f4       e3m4     e3m4     f4       e3m4     e3m4     e3m4     e3m4     f4       e3m4     e3m4     e3m4     e3m4     e3m4     e3m4     e3m4     e3m4     e3m4     c8       c8
e4m3     e4m3     e4m3     f4       f8       f8       e4m3     f4       f8       f8       f4       f4       f8       c8       c16      f4       e4m3     e4m3     f4       e4m3     e4m3     e4m3     e4m3     f4       e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     c8       c8
e8m0     e8m0     e8m0     f4       f8       f8       e8m0     f4       f8       f8       f4       f4       f8       c8       c16      f4       f4       f4       f4       f4       f4       f4       f4       e8m0     f4       f4       f4       f4       f4       f4       f4       f4       f4       c8       c8
e2m3     e2m3     e2m3     f4       f8       f8       e2m3     f4       f8       f8       f4       f4       f8       c8       c16      f4       e2m3     e2m3     f4       e2m3     e2m3     e2m3     e2m3     f4       e2m3     e2m3     e2m3     e2m3     e2m3     f4       e2m3     e2m3     f4       c8       c8
e3m2     e3m2     e3m2     f4       f8       f8       e3m2     f4       f8       f8       f4       f4       f8       c8       c16      f4       e3m2     e3m2     f4       e3m2     e3m2     e3m2     e3m2     f4       e3m2     e3m2     e3m2     e3m2     e3m2     e3m2     e3m2     e3m2     e3m2     c8       c8
e2m1     e2m1     e2m1     f4       f8       f8       e2m1     f4       f8       f8       f4       f4       f8       c8       c16      f4       e2m1     e2m1     f4       e2m1     e2m1     e2m1     e2m1     f4       e2m1     e2m1     e2m1     e2m1     e2m1     e2m1     e2m1     e2m1     e2m1     c8       c8
int1     int1     i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      f4       int1     int1     f4       int1     int1     int1     int1     f4       int1     int1     int1     int1     int2     int4     i1       i1       i1       c8       c8
int2     int2     i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      f4       int2     int2     f4       int2     int2     int2     int2     f4       int2     int2     int2     int2     int2     int4     i1       i1       i1       c8       c8
int4     int4     i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      f4       int4     int4     f4       int4     int4     int4     int4     f4       f4       int4     int4     int4     int4     int4     i1       i1       i1       c8       c8
uint1    uint1    i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      f4       uint1    uint1    f4       uint1    uint1    uint1    uint1    f4       uint1    uint1    uint1    i1       i1       i1       uint1    uint2    uint4    c8       c8
uint2    uint2    i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      f4       uint2    uint2    f4       uint2    uint2    uint2    uint2    f4       uint2    uint2    uint2    i1       i1       i1       uint2    uint2    uint4    c8       c8
uint4    uint4    i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      f4       uint4    uint4    f4       uint4    uint4    uint4    uint4    f4       f4       uint4    uint4    i1       i1       i1       uint4    uint4    uint4    c8       c8
c32      c32      c32      c8       c16      c16      c32      c8       c16      c16      c8       c8       c16      c8       c16      c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c32      c32
bc32     bc32     bc32     c8       c16      c16      bc32     c8       c16      c16      c8       c8       c16      c8       c16      c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       c8       bc32     bc32
"""
WEAK = """
         bool     int      float    complex
b1       b1       i8       f8       c16
i1       i1       i1       f8       c16
i2       i2       i2       f8       c16
i4       i4       i4       f8       c16
i8       i8       i8       f8       c16
u1       u1       u1       f8       c16
u2       u2       u2       f8       c16
u4       u4       u4       f8       c16
u8       u8       u8       f8       c16
f2       f2       f2       f2       c8
f4       f4       f4       f4       c8
f8       f8       f8       f8       c16
c8       c8       c8       c8       c8
c16      c16      c16      c16      c16
bf16     bf16     bf16     f4       c8
e4m3fn   e4m3fn   e4m3fn   f4       c8
e4m3fnuz e4m3fnuz e4m3fnuz f4       c8
e5m2     e5m2     e5m2     f4       c8
e5m2fnuz e5m2fnuz e5m2fnuz f4       c8
e4m3b11  e4m3b11  e4m3b11  f4       c8
e3m4     e3m4     e3m4     f4       c8
e4m3     e4m3     e4m3     f4       c8
e8m0     e8m0     e8m0     f4       c8
e2m3     e2m3     e2m3     f4       c8
e3m2     e3m2     e3m2     f4       c8
e2m1     e2m1     e2m1     f4       c8
int1     int1     i1       f2       c8
int2     int2     i1       f2       c8
int4     int4     i1       f2       c8
uint1    uint1    i1       f2       c8
uint2    uint2    i1       f2       c8
uint4    uint4    i1       f2       c8
c32      c32      c32      c8       c8
bc32     bc32     bc32     c8       c8
"""
CAN_CAST_SAFE = """
b1       1111111111111111111111111111111111
i1       .1111....11111111111111111......11
i2       ..111.....1111....................
i4       ...11......1.1....................
i8       ....1......1.1....................
u1       ..111111111111111111111111......11
u2       ...11.111.1111....................
u4       ....1..11..1.1....................
u8       ........1..1.1....................
f2       .........11111....................
f4       ..........1111....................
f8       ...........1.1....................
c8       ............11....................
c16      .............1....................
bf16     ..........11111...................
e4m3fn   ..........1111.11.1111.111111111..
e4m3fnuz ..........1111.11.1111.111111111..
e5m2     ..........1111...1................
e5m2fnuz ..........1111.11.1111.111111111..
e4m3b11  ..........1111.11.1111.111111111..
e3m4     ..........1111.11.1111.111111111..
e4m3     ..........1111.11.1111.111111111..
e8m0     ..........1111........1...........
e2m3     ..........1111.11.1111.11111.11...
e3m2     ..........1111.11.1111.111111111..
e2m1     ..........1111.11.1111.111111111..
int1     .1111....11111.11.1111.111111.....
int2     .1111....11111.11.1111.111.11.....
int4     .1111....11111.11.1111..11..1.....
uint1    .1111111111111.11.1111.111...111..
uint2    .1111111111111.11.1111.111....11..
uint4    .1111111111111.11.1111..11.....1..
c32      ............11..................11
bc32     ............11..................11
"""
CAN_CAST_SAME_KIND = """
b1       1111111111111111111111111111111111
i1       .1111....1111111111111111111111111
i2       .1111....11111111111111111111111..
i4       .1111....11111111111111111111111..
i8       .1111....11111111111111111111111..
u1       .111111111111111111111111111111111
u2       .1111111111111111111111111111111..
u4       .1111111111111111111111111111111..
u8       .1111111111111111111111111111111..
f2       .........11111111111111111111111..
f4       .........11111111111111111111111..
f8       .........11111111111111111111111..
c8       ............11111.11111111111111..
c16      ............11111.11111111111111..
bf16     ..........1111111.11111111111111..
e4m3fn   ..........1111111.1111.111111111..
e4m3fnuz ..........1111111.1111.111111111..
e5m2     .........1111111111111.111111111..
e5m2fnuz ..........1111111.1111.111111111..
e4m3b11  ..........1111111.1111.111111111..
e3m4     ..........1111111.1111.111111111..
e4m3     ..........1111111.1111.111111111..
e8m0     ..........11111.......1...........
e2m3     ..........1111111.1111.11111.11...
e3m2     ..........1111111.1111.111111111..
e2m1     ..........1111111.1111.111111111..
int1     .1111....11111111.1111.111111.....
int2     .1111....11111111.1111.111.11.....
int4     .1111....11111111.1111..11..1.....
uint1    .1111111111111111.1111.111...111..
uint2    .1111111111111111.1111.111....11..
uint4    .1111111111111111.1111..11.....1..
c32      ............11..................11
bc32     ............11..................11
"""

#: Cells where a ufunc does not follow the rules above (ml_dtypes' loops): the ufuncs (those
#: that share the cell share a line), left, right (a dtype, or py:<kind> for a Python scalar) and
#: the result (or !code for an error). Measured for every ufunc of a binary op exactref names.
UFUNC_EXCEPTIONS = """
divide                                                                  bool               int1               float16
divide                                                                  bool               int2               float16
divide                                                                  bool               int4               float16
divide                                                                  bool               uint1              float16
divide                                                                  bool               uint2              float16
divide                                                                  bool               uint4              float16
divide                                                                  int8               int1               float16
divide                                                                  int8               int2               float16
divide                                                                  int8               int4               float16
divide                                                                  int8               uint1              float16
divide                                                                  int8               uint2              float16
divide                                                                  int8               uint4              float16
divide                                                                  int16              int1               float32
divide                                                                  int16              int2               float32
divide                                                                  int16              int4               float32
divide                                                                  int16              uint1              float32
divide                                                                  int16              uint2              float32
divide                                                                  int16              uint4              float32
divide                                                                  uint8              int1               float16
divide                                                                  uint8              int2               float16
divide                                                                  uint8              int4               float16
divide                                                                  uint8              uint1              float16
divide                                                                  uint8              uint2              float16
divide                                                                  uint8              uint4              float16
divide                                                                  uint16             int1               float32
divide                                                                  uint16             int2               float32
divide                                                                  uint16             int4               float32
divide                                                                  uint16             uint1              float32
divide                                                                  uint16             uint2              float32
divide                                                                  uint16             uint4              float32
divide                                                                  int1               bool               float16
divide                                                                  int1               int8               float16
divide                                                                  int1               int16              float32
divide                                                                  int1               uint8              float16
divide                                                                  int1               uint16             float32
divide                                                                  int1               int1               float16
divide                                                                  int1               int2               float16
divide                                                                  int1               int4               float16
divide                                                                  int1               uint1              float16
divide                                                                  int1               uint2              float16
divide                                                                  int1               uint4              float16
divide                                                                  int1               py:bool            float16
divide                                                                  int1               py:int             float16
divide                                                                  int2               bool               float16
divide                                                                  int2               int8               float16
divide                                                                  int2               int16              float32
divide                                                                  int2               uint8              float16
divide                                                                  int2               uint16             float32
divide                                                                  int2               int1               float16
divide                                                                  int2               int2               float16
divide                                                                  int2               int4               float16
divide                                                                  int2               uint1              float16
divide                                                                  int2               uint2              float16
divide                                                                  int2               uint4              float16
divide                                                                  int2               py:bool            float16
divide                                                                  int2               py:int             float16
divide                                                                  int4               bool               float16
divide                                                                  int4               int8               float16
divide                                                                  int4               int16              float32
divide                                                                  int4               uint8              float16
divide                                                                  int4               uint16             float32
divide                                                                  int4               int1               float16
divide                                                                  int4               int2               float16
divide                                                                  int4               int4               float16
divide                                                                  int4               uint1              float16
divide                                                                  int4               uint2              float16
divide                                                                  int4               uint4              float16
divide                                                                  int4               py:bool            float16
divide                                                                  int4               py:int             float16
divide                                                                  uint1              bool               float16
divide                                                                  uint1              int8               float16
divide                                                                  uint1              int16              float32
divide                                                                  uint1              uint8              float16
divide                                                                  uint1              uint16             float32
divide                                                                  uint1              int1               float16
divide                                                                  uint1              int2               float16
divide                                                                  uint1              int4               float16
divide                                                                  uint1              uint1              float16
divide                                                                  uint1              uint2              float16
divide                                                                  uint1              uint4              float16
divide                                                                  uint1              py:bool            float16
divide                                                                  uint1              py:int             float16
divide                                                                  uint2              bool               float16
divide                                                                  uint2              int8               float16
divide                                                                  uint2              int16              float32
divide                                                                  uint2              uint8              float16
divide                                                                  uint2              uint16             float32
divide                                                                  uint2              int1               float16
divide                                                                  uint2              int2               float16
divide                                                                  uint2              int4               float16
divide                                                                  uint2              uint1              float16
divide                                                                  uint2              uint2              float16
divide                                                                  uint2              uint4              float16
divide                                                                  uint2              py:bool            float16
divide                                                                  uint2              py:int             float16
divide                                                                  uint4              bool               float16
divide                                                                  uint4              int8               float16
divide                                                                  uint4              int16              float32
divide                                                                  uint4              uint8              float16
divide                                                                  uint4              uint16             float32
divide                                                                  uint4              int1               float16
divide                                                                  uint4              int2               float16
divide                                                                  uint4              int4               float16
divide                                                                  uint4              uint1              float16
divide                                                                  uint4              uint2              float16
divide                                                                  uint4              uint4              float16
divide                                                                  uint4              py:bool            float16
divide                                                                  uint4              py:int             float16
divide                                                                  py:bool            int1               float16
divide                                                                  py:bool            int2               float16
divide                                                                  py:bool            int4               float16
divide                                                                  py:bool            uint1              float16
divide                                                                  py:bool            uint2              float16
divide                                                                  py:bool            uint4              float16
divide                                                                  py:int             int1               float16
divide                                                                  py:int             int2               float16
divide                                                                  py:int             int4               float16
divide                                                                  py:int             uint1              float16
divide                                                                  py:int             uint2              float16
divide                                                                  py:int             uint4              float16
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float8_e4m3fn      float8_e4m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float8_e4m3fnuz    float8_e4m3fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float8_e5m2fnuz    float8_e5m2fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float8_e4m3b11fnuz float8_e4m3b11fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float8_e3m4        float8_e3m4
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float8_e4m3        float8_e4m3
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float6_e2m3fn      float6_e2m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float6_e3m2fn      float6_e3m2fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int1               float4_e2m1fn      float4_e2m1fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float8_e4m3fn      float8_e4m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float8_e4m3fnuz    float8_e4m3fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float8_e5m2fnuz    float8_e5m2fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float8_e4m3b11fnuz float8_e4m3b11fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float8_e3m4        float8_e3m4
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float8_e4m3        float8_e4m3
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float6_e2m3fn      float6_e2m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float6_e3m2fn      float6_e3m2fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int2               float4_e2m1fn      float4_e2m1fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float8_e4m3fn      float8_e4m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float8_e4m3fnuz    float8_e4m3fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float8_e5m2fnuz    float8_e5m2fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float8_e4m3b11fnuz float8_e4m3b11fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float8_e3m4        float8_e3m4
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float8_e4m3        float8_e4m3
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float6_e3m2fn      float6_e3m2fn
divide,power,maximum,minimum,fmax,fmin,fmod                             int4               float4_e2m1fn      float4_e2m1fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float8_e4m3fn      float8_e4m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float8_e4m3fnuz    float8_e4m3fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float8_e5m2fnuz    float8_e5m2fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float8_e4m3b11fnuz float8_e4m3b11fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float8_e3m4        float8_e3m4
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float8_e4m3        float8_e4m3
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float6_e2m3fn      float6_e2m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float6_e3m2fn      float6_e3m2fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint1              float4_e2m1fn      float4_e2m1fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float8_e4m3fn      float8_e4m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float8_e4m3fnuz    float8_e4m3fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float8_e5m2fnuz    float8_e5m2fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float8_e4m3b11fnuz float8_e4m3b11fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float8_e3m4        float8_e3m4
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float8_e4m3        float8_e4m3
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float6_e2m3fn      float6_e2m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float6_e3m2fn      float6_e3m2fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint2              float4_e2m1fn      float4_e2m1fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float8_e4m3fn      float8_e4m3fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float8_e4m3fnuz    float8_e4m3fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float8_e5m2fnuz    float8_e5m2fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float8_e4m3b11fnuz float8_e4m3b11fnuz
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float8_e3m4        float8_e3m4
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float8_e4m3        float8_e4m3
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float6_e3m2fn      float6_e3m2fn
divide,power,maximum,minimum,fmax,fmin,fmod                             uint4              float4_e2m1fn      float4_e2m1fn
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               int4               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               uint1              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               uint2              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               uint4              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               int4               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               int4               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               int4               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint1              bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint1              uint1              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint1              uint2              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint1              uint4              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint1              py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint2              bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint2              uint1              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint2              uint2              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint2              uint4              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint2              py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint4              bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint4              uint1              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint4              uint2              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint4              uint4              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod uint4              py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            int4               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            uint1              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            uint2              int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            uint4              int8
bitwise_and,bitwise_or,bitwise_xor                                      int1               float8_e4m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float8_e4m3fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float8_e5m2fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float8_e4m3b11fnuz !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float8_e3m4        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float8_e4m3        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float6_e2m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float6_e3m2fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int1               float4_e2m1fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float8_e4m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float8_e4m3fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float8_e5m2fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float8_e4m3b11fnuz !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float8_e3m4        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float8_e4m3        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float6_e2m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float6_e3m2fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int2               float4_e2m1fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float8_e4m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float8_e4m3fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float8_e5m2fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float8_e4m3b11fnuz !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float8_e3m4        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float8_e4m3        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float6_e3m2fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      int4               float4_e2m1fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float8_e4m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float8_e4m3fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float8_e5m2fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float8_e4m3b11fnuz !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float8_e3m4        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float8_e4m3        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float6_e2m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float6_e3m2fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint1              float4_e2m1fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float8_e4m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float8_e4m3fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float8_e5m2fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float8_e4m3b11fnuz !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float8_e3m4        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float8_e4m3        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float6_e2m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float6_e3m2fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint2              float4_e2m1fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float8_e4m3fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float8_e4m3fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float8_e5m2fnuz    !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float8_e4m3b11fnuz !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float8_e3m4        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float8_e4m3        !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float6_e3m2fn      !no_loop
bitwise_and,bitwise_or,bitwise_xor                                      uint4              float4_e2m1fn      !no_loop
"""
