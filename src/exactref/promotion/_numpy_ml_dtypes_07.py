"""numpy's promotion tables with ml_dtypes 0.7 (numpy 2.4.6, ml_dtypes 0.7.0), as measured.

ml_dtypes 0.7 registers its types' promotion with numpy's DType system: ``np.result_type`` and
the ufuncs now agree, an ml_dtypes float with a Python float keeps its dtype (``bfloat16 + 0.5``
is bfloat16, float32 with 0.6), an ml_dtypes sub-byte integer with a Python int keeps its dtype
(``int4 + 3`` is int4), ``float8_e4m3fn + float8_e4m3fnuz`` is float32 (float8_e4m3fn with
0.6), bfloat16 with any float8 is bfloat16 (float32 with 0.6), and complex32 and bcomplex32 join the lattice (``float16 + complex32`` is
complex32). STRONG, WEAK and the two cast tables list only the rows that differ from those of
:mod:`exactref.promotion._numpy_ml_dtypes_06` (the ml_dtypes 0.6 tables, in the same layout;
:func:`exactref.promotion._numpy.overlay` puts them in place, and a full table pasted here
works as well); ``python scripts/record_promotion_fixtures.py --tables numpy_ml_dtypes_0.7``
prints the full tables from ``fixtures/numpy_ml_dtypes_0.7.json`` (bitwise_or and bitwise_xor
added to bitwise_and's exception lines by hand, measured), and ``tests/promotion`` checks the
policy with these rules against every cell of that fixture.
"""

#: A Python int beside a sub-byte integer array keeps the array's dtype, and numpy checks its
#: value against these builtin types' bounds (``int4 + 300`` is int4, ``uint4 + 300`` raises
#: "Python integer 300 out of bounds for uint8"). ml_dtypes' floats take any Python int.
INT_BOUNDS = {"int1": "int16", "int2": "int16", "int4": "int16", "uint1": "uint8",
              "uint2": "uint8", "uint4": "uint8"}

STRONG = """
f2       f2       f2       f4       f8       f8       f2       f4       f8       f8       f2       f4       f8       c8       c16      f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f4       f2       f2       f2       f2       f2       f2       c32      c8
bf16     bf16     bf16     f4       f8       f8       bf16     f4       f8       f8       f4       f4       f8       c8       c16      bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     bf16     c8       bc32
e4m3fn   e4m3fn   e4m3fn   f4       f8       f8       e4m3fn   f4       f8       f8       f4       f4       f8       c8       c16      bf16     e4m3fn   f4       f4       f4       f4       f4       f4       f4       e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   e4m3fn   c32      bc32
e4m3fnuz e4m3fnuz e4m3fnuz f4       f8       f8       e4m3fnuz f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       e4m3fnuz f4       f4       f4       f4       f4       f4       e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz c32      bc32
e5m2     e5m2     e5m2     f4       f8       f8       e5m2     f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       e5m2     f4       f4       f4       f4       f4       f4       e5m2     e5m2     e5m2     e5m2     e5m2     e5m2     e5m2     f4       c32      bc32
e5m2fnuz e5m2fnuz e5m2fnuz f4       f8       f8       e5m2fnuz f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       f4       e5m2fnuz f4       f4       f4       f4       f4       e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz f4       c32      bc32
e4m3b11  e4m3b11  e4m3b11  f4       f8       f8       e4m3b11  f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       f4       f4       e4m3b11  f4       f4       f4       e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  e4m3b11  c32      bc32
e3m4     e3m4     e3m4     f4       f8       f8       e3m4     f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       f4       f4       f4       e3m4     f4       f4       e3m4     f4       e3m4     e3m4     e3m4     e3m4     e3m4     e3m4     e3m4     c32      bc32
e4m3     e4m3     e4m3     f4       f8       f8       e4m3     f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       f4       f4       f4       f4       e4m3     f4       e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     e4m3     c32      bc32
e8m0     e8m0     e8m0     f4       f8       f8       e8m0     f4       f8       f8       f4       f4       f8       c8       c16      bf16     f4       f4       f4       f4       f4       f4       f4       e8m0     f4       f4       f4       f4       f4       f4       f4       f4       f4       c8       bc32
e2m3     e2m3     e2m3     f4       f8       f8       e2m3     f4       f8       f8       f4       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz f4       f4       e4m3b11  e3m4     e4m3     f4       e2m3     f4       e2m3     e2m3     e2m3     f4       e2m3     e2m3     f4       c32      bc32
e3m2     e3m2     e3m2     f4       f8       f8       e3m2     f4       f8       f8       f4       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  f4       e4m3     f4       f4       e3m2     e3m2     e3m2     e3m2     e3m2     e3m2     e3m2     f4       c32      bc32
e2m1     e2m1     e2m1     f4       f8       f8       e2m1     f4       f8       f8       f4       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     f4       e2m3     e3m2     e2m1     e2m1     e2m1     f4       e2m1     e2m1     f4       c32      bc32
int1     int1     i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     f4       e2m3     e3m2     e2m1     int1     i1       i1       i1       i1       i1       c32      bc32
int2     int2     i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     f4       e2m3     e3m2     e2m1     i1       int2     i1       i1       i1       i1       c32      bc32
int4     int4     i1       i2       i4       i8       i2       i4       i8       f8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     f4       f4       e3m2     f4       i1       i1       int4     i1       i1       i1       c32      bc32
uint1    uint1    i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     f4       e2m3     e3m2     e2m1     i1       i1       i1       uint1    u1       u1       c32      bc32
uint2    uint2    i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz e5m2     e5m2fnuz e4m3b11  e3m4     e4m3     f4       e2m3     e3m2     e2m1     i1       i1       i1       u1       uint2    u1       c32      bc32
uint4    uint4    i1       i2       i4       i8       u1       u2       u4       u8       f2       f4       f8       c8       c16      bf16     e4m3fn   e4m3fnuz f4       f4       e4m3b11  e3m4     e4m3     f4       f4       f4       f4       i1       i1       i1       u1       u1       uint4    c32      bc32
c32      c32      c32      c8       c16      c16      c32      c8       c16      c16      c32      c8       c16      c8       c16      c8       c32      c32      c32      c32      c32      c32      c32      c8       c32      c32      c32      c32      c32      c32      c32      c32      c32      c32      c8
bc32     bc32     bc32     c8       c16      c16      bc32     c8       c16      c16      c8       c8       c16      c8       c16      bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     bc32     c8       bc32
"""
WEAK = """
bf16     bf16     bf16     bf16     c8
e4m3fn   e4m3fn   e4m3fn   e4m3fn   c8
e4m3fnuz e4m3fnuz e4m3fnuz e4m3fnuz c8
e5m2     e5m2     e5m2     e5m2     c8
e5m2fnuz e5m2fnuz e5m2fnuz e5m2fnuz c8
e4m3b11  e4m3b11  e4m3b11  e4m3b11  c8
e3m4     e3m4     e3m4     e3m4     c8
e4m3     e4m3     e4m3     e4m3     c8
e8m0     e8m0     e8m0     e8m0     c8
e2m3     e2m3     e2m3     e2m3     c8
e3m2     e3m2     e3m2     e3m2     c8
e2m1     e2m1     e2m1     e2m1     c8
int1     int1     int1     f2       c8
int2     int2     int2     f2       c8
int4     int4     int4     f2       c8
uint1    uint1    uint1    f2       c8
uint2    uint2    uint2    f2       c8
uint4    uint4    uint4    f2       c8
c32      c32      c32      c32      c32
bc32     bc32     bc32     bc32     bc32
"""
CAN_CAST_SAFE = """
f2       .........11111..................1.
bf16     ..........11111..................1
e4m3fn   ..........111111................11
e4m3fnuz ..........11111.1...............11
e5m2     ..........11111..1..............11
e5m2fnuz ..........11111...1.............11
e4m3b11  ..........11111....1............11
e3m4     ..........11111.....1...........11
e4m3     ..........11111......1..........11
e8m0     ..........11111.......1..........1
e2m3     ..........1111111..111.1........11
e3m2     ..........1111111111.1..1.......11
e2m1     ..........111111111111.111......11
int1     .1111....1111111111111.111111...11
int2     .1111....1111111111111.111.11...11
int4     .1111....1111111111111..1...1...11
uint1    .111111111111111111111.111.1111111
uint2    .111111111111111111111.111..1.1111
uint4    .1111111111111111..111.........111
c32      ............11..................1.
bc32     ............11...................1
"""
CAN_CAST_SAME_KIND = """
i1       .1111....11111111111111111111...11
i2       .1111....11111111111111111111...11
i4       .1111....11111111111111111111...11
i8       .1111....11111111111111111111...11
u2       .111111111111111111111111111111111
u4       .111111111111111111111111111111111
u8       .111111111111111111111111111111111
f2       .........11111111111111111......11
f4       .........11111111111111111......11
f8       .........11111111111111111......11
c8       ............11..................11
c16      ............11..................11
bf16     .........11111111111111111......11
e4m3fn   .........11111111111111111......11
e4m3fnuz .........11111111111111111......11
e5m2     .........11111111111111111......11
e5m2fnuz .........11111111111111111......11
e4m3b11  .........11111111111111111......11
e3m4     .........11111111111111111......11
e4m3     .........11111111111111111......11
e8m0     .........11111111111111111......11
e2m3     .........11111111111111111......11
e3m2     .........11111111111111111......11
e2m1     .........11111111111111111......11
int1     .1111....11111111111111111111...11
int2     .1111....11111111111111111111...11
int4     .1111....11111111111111111111...11
uint1    .111111111111111111111111111111111
uint2    .111111111111111111111111111111111
uint4    .111111111111111111111111111111111
"""
#: Cells where a ufunc does not follow the tables (its loops): the layout of
#: ``_numpy.UFUNC_EXCEPTIONS``. bitwise_or and bitwise_xor share bitwise_and's cells (measured on
#: every pair with ml_dtypes 0.7.0; the fixture records bitwise_and).
UFUNC_EXCEPTIONS = """
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod bool               int4               int8
power,maximum,minimum,fmax,fmin,fmod                                    bool               uint1              uint8
power,maximum,minimum,fmax,fmin,fmod                                    bool               uint2              uint8
power,maximum,minimum,fmax,fmin,fmod                                    bool               uint4              uint8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int1               py:int             int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int2               py:int             int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               bool               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               int4               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               py:bool            int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod int4               py:int             int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:bool            int4               int8
power,maximum,minimum,fmax,fmin,fmod                                    py:bool            uint1              uint8
power,maximum,minimum,fmax,fmin,fmod                                    py:bool            uint2              uint8
power,maximum,minimum,fmax,fmin,fmod                                    py:bool            uint4              uint8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:int             int1               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:int             int2               int8
power,bitwise_and,bitwise_or,bitwise_xor,maximum,minimum,fmax,fmin,fmod py:int             int4               int8
power,maximum,minimum,fmax,fmin,fmod                                    py:int             uint1              uint8
power,maximum,minimum,fmax,fmin,fmod                                    py:int             uint2              uint8
power,maximum,minimum,fmax,fmin,fmod                                    py:int             uint4              uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint1              bool               uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint1              py:bool            uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint1              py:int             uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint1              uint1              uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint2              bool               uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint2              py:bool            uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint2              py:int             uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint2              uint2              uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint4              bool               uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint4              py:bool            uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint4              py:int             uint8
power,maximum,minimum,fmax,fmin,fmod                                    uint4              uint4              uint8
bitwise_and,bitwise_or,bitwise_xor                                      bool               uint1              int8
bitwise_and,bitwise_or,bitwise_xor                                      bool               uint2              int8
bitwise_and,bitwise_or,bitwise_xor                                      bool               uint4              int8
bitwise_and,bitwise_or,bitwise_xor                                      py:bool            uint1              int8
bitwise_and,bitwise_or,bitwise_xor                                      py:bool            uint2              int8
bitwise_and,bitwise_or,bitwise_xor                                      py:bool            uint4              int8
bitwise_and,bitwise_or,bitwise_xor                                      py:int             uint1              int8
bitwise_and,bitwise_or,bitwise_xor                                      py:int             uint2              int8
bitwise_and,bitwise_or,bitwise_xor                                      py:int             uint4              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint1              bool               int8
bitwise_and,bitwise_or,bitwise_xor                                      uint1              py:bool            int8
bitwise_and,bitwise_or,bitwise_xor                                      uint1              py:int             int8
bitwise_and,bitwise_or,bitwise_xor                                      uint1              uint1              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint1              uint2              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint1              uint4              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint2              bool               int8
bitwise_and,bitwise_or,bitwise_xor                                      uint2              py:bool            int8
bitwise_and,bitwise_or,bitwise_xor                                      uint2              py:int             int8
bitwise_and,bitwise_or,bitwise_xor                                      uint2              uint1              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint2              uint2              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint2              uint4              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint4              bool               int8
bitwise_and,bitwise_or,bitwise_xor                                      uint4              py:bool            int8
bitwise_and,bitwise_or,bitwise_xor                                      uint4              py:int             int8
bitwise_and,bitwise_or,bitwise_xor                                      uint4              uint1              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint4              uint2              int8
bitwise_and,bitwise_or,bitwise_xor                                      uint4              uint4              int8
arctan2                                                                 int1               py:float           float64
arctan2                                                                 int1               uint16             float64
arctan2                                                                 int1               uint8              float32
arctan2                                                                 int2               py:float           float64
arctan2                                                                 int2               uint16             float64
arctan2                                                                 int2               uint8              float32
arctan2                                                                 int4               py:float           float64
arctan2                                                                 int4               uint16             float64
arctan2                                                                 int4               uint8              float32
arctan2                                                                 py:float           int1               float64
arctan2                                                                 py:float           int2               float64
arctan2                                                                 py:float           int4               float64
arctan2                                                                 py:float           uint1              float64
arctan2                                                                 py:float           uint2              float64
arctan2                                                                 py:float           uint4              float64
arctan2                                                                 uint1              py:float           float64
arctan2                                                                 uint16             int1               float64
arctan2                                                                 uint16             int2               float64
arctan2                                                                 uint16             int4               float64
arctan2                                                                 uint2              py:float           float64
arctan2                                                                 uint4              py:float           float64
arctan2                                                                 uint8              int1               float32
arctan2                                                                 uint8              int2               float32
arctan2                                                                 uint8              int4               float32
"""
