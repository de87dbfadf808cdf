//===- BPOpTable.td - The op table: vector ops declared once -*- tablegen -*-===//
//
// Each op here is one record of BP_TableOp. Its class says its operands,
// result type and verifier rules; its fields say the element types it takes,
// the tile-library functor it applies (blockpipe/Tile/Functors.h), its NumPy
// reference, its Python names and its documentation. bp-tblgen writes the
// records into the table (blockpipe/Dialect/OpTable.h) that the verifier,
// codegen and the Python package read: adding an op of an existing class
// adds its record, its functor and its tests, and nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DIALECT_BPOPTABLE_TD
#define BLOCKPIPE_DIALECT_BPOPTABLE_TD

// Verifies an op by its record's class and dtype rule.
def BP_TableOpTrait : BP_NativeOpTrait<"TableOp">;

class BP_TableOp<string mnemonic, string cls, list<Trait> traits = []>
    : BP_Op<mnemonic, traits # [Pure, BP_KernelOnly, BP_VectorOp,
                                BP_TableOpTrait]> {
  // unary, binary (tile or scalar rhs), scalar (scalar rhs only),
  // row_reduction, col_reduction, row_arg_reduction, col_arg_reduction.
  string opClass = cls;
  // The element types it takes: any, float or integer.
  string dtypes = "any";
  // The functor of the tile library it applies to each element (unary,
  // binary, scalar) or folds over each row or column (reductions).
  string functor = "";
  // What NumPy computes for it: an expression over x (the tile) and, for
  // binary and scalar ops, y (the other operand).
  string numpy = "";
  // Its name under `pl` (pypto's: `and_` for and).
  string plName = mnemonic;
  // Where pypto has it: pl.X, pl.tile.X, pl.tensor.X.
  list<string> spellings = ["pl", "tile", "tensor"];
  // Its Python parameters: the operands in order, then pypto's optional
  // ones (a `tmp` or `tmp_tile` scratch is accepted and not needed; any
  // other must keep its default).
  string params = "";
  // Whether x op y == y op x (a scalar or broadcast first operand swaps).
  bit commutative = 0;
  // Reductions: what the padding outside a valid shape holds (zero, one,
  // lowest, highest). Arg reductions: the same, for the extremum's fold.
  string identity = "";
  // Integer operands the functor's `valid` refuses: the run-time error,
  // "<what>: <why>" (the user's line goes after <what>). Empty: every
  // operand is valid.
  string check = "";
}

//===----------------------------------------------------------------------===//
// Elementwise, one operand
//===----------------------------------------------------------------------===//

class BP_UnaryTableOp<string mnemonic, string what>
    : BP_TableOp<mnemonic, "unary", [SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    Applies the op to every element of a `vec` tile; the result has the
    operand's type.
  }];
  let params = "tile";
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source))";
}

def BP_ExpOp : BP_UnaryTableOp<"exp", "exponential e**x"> {
  let dtypes = "float";
  let functor = "Exp";
  let numpy = "np.exp(x)";
}
def BP_SqrtOp : BP_UnaryTableOp<"sqrt", "square root"> {
  let dtypes = "float";
  let functor = "Sqrt";
  let numpy = "np.sqrt(x)";
}
def BP_ReluOp : BP_UnaryTableOp<"relu", "max(x, 0)"> {
  let functor = "Relu";
  let numpy = "np.maximum(x, 0).astype(x.dtype)";
  let spellings = ["pl", "tile"];
}
def BP_NegOp : BP_UnaryTableOp<"neg", "negation -x"> {
  let functor = "Neg";
  let numpy = "np.negative(x)";
}
def BP_AbsOp : BP_UnaryTableOp<"abs", "absolute value |x|"> {
  let functor = "Abs";
  let numpy = "np.abs(x)";
}
def BP_RecipOp : BP_UnaryTableOp<"recip", "reciprocal 1 / x"> {
  let dtypes = "float";
  let functor = "Recip";
  let numpy = "np.reciprocal(x)";
  let params = "tile, high_precision=False";
}
def BP_RsqrtOp : BP_UnaryTableOp<"rsqrt",
                                 "reciprocal square root 1 / sqrt(x)"> {
  let dtypes = "float";
  let functor = "Rsqrt";
  let numpy = "1 / np.sqrt(x)";
  let params = "tile, tmp=None, high_precision=False";
}
def BP_LogOp : BP_UnaryTableOp<"log", "natural logarithm ln(x)"> {
  let dtypes = "float";
  let functor = "Log";
  let numpy = "np.log(x)";
  let params = "tile, high_precision=False";
}
def BP_TanhOp : BP_UnaryTableOp<"tanh", "hyperbolic tangent"> {
  let dtypes = "float";
  let functor = "Tanh";
  let numpy = "np.tanh(x)";
  let spellings = ["pl"];
}
def BP_SigmoidOp : BP_UnaryTableOp<"sigmoid",
                                   "logistic sigmoid 1 / (1 + exp(-x))"> {
  let dtypes = "float";
  let functor = "Sigmoid";
  let numpy = "1 / (1 + np.exp(-x))";
  let spellings = ["pl"];
}

def BP_SinOp : BP_UnaryTableOp<"sin", "sine"> {
  let dtypes = "float";
  let functor = "Sin";
  let numpy = "np.sin(x)";
}
def BP_CosOp : BP_UnaryTableOp<"cos", "cosine"> {
  let dtypes = "float";
  let functor = "Cos";
  let numpy = "np.cos(x)";
}
def BP_NotOp : BP_UnaryTableOp<"not", "bitwise not ~x"> {
  let dtypes = "integer";
  let functor = "Not";
  let numpy = "np.invert(x)";
  let plName = "not_";
}

//===----------------------------------------------------------------------===//
// Elementwise, two operands
//===----------------------------------------------------------------------===//

class BP_BinaryTableOp<string mnemonic, string what>
    : BP_TableOp<mnemonic, "binary", [AllTypesMatch<["lhs", "result"]>]> {
  let summary = "elementwise " # what;
  let description = [{
    Elementwise on `vec` tiles. The right operand is a tile of the same type,
    an Mx1 tile whose row i applies to all of row i of an MxN left operand
    (N > 1), a 1xN tile whose column j applies to all of column j of an MxN
    left operand (M > 1; a gamma or bias vector), or a scalar of the tile's
    element type, broadcast to every element. The result has the left
    operand's type.

    ```mlir
    %c = bp.}] # mnemonic # [{ %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %d = bp.}] # mnemonic # [{ %a, %s : !bp.tile<16x16xf32, vec>, f32
    %e = bp.}] # mnemonic # [{ %a, %r : !bp.tile<16x16xf32, vec>, !bp.tile<16x1xf32, vec>
    %f = bp.}] # mnemonic # [{ %a, %g : !bp.tile<16x16xf32, vec>, !bp.tile<1x16xf32, vec>
    ```
  }];
  let params = "lhs, rhs";
  let arguments = (ins BP_Tile:$lhs, AnyTypeOf<[BP_Tile, BP_Scalar]>:$rhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))";
}

def BP_AddOp : BP_BinaryTableOp<"add", "sum x + y"> {
  let functor = "Add";
  let numpy = "x + y";
  let commutative = 1;
}
def BP_SubOp : BP_BinaryTableOp<"sub", "difference x - y"> {
  let functor = "Sub";
  let numpy = "x - y";
}
def BP_MulOp : BP_BinaryTableOp<"mul", "product x * y"> {
  let functor = "Mul";
  let numpy = "x * y";
  let commutative = 1;
}
def BP_DivOp : BP_BinaryTableOp<
    "div", "quotient x / y (integer division truncates toward zero)"> {
  let functor = "Div";
  let numpy = "np.trunc(x / y).astype(x.dtype) if x.dtype.kind in 'iu' " #
              "else x / y";
  let params = "lhs, rhs, high_precision=False";
  let check = "integer division: a divisor is zero, or the lowest value " #
              "is divided by -1";
}
def BP_MaximumOp : BP_BinaryTableOp<"maximum", "maximum max(x, y)"> {
  let functor = "Max";
  let numpy = "np.maximum(x, y)";
  let commutative = 1;
}
def BP_MinimumOp : BP_BinaryTableOp<"minimum", "minimum min(x, y)"> {
  let functor = "Min";
  let numpy = "np.minimum(x, y)";
  let commutative = 1;
}

def BP_FmodOp : BP_BinaryTableOp<
    "fmod", "remainder of x / y with the sign of x (C's fmod and %)"> {
  let functor = "Fmod";
  let numpy = "np.fmod(x, y)";
  let check = "integer remainder: a divisor is zero, or the lowest value " #
              "is divided by -1";
}
def BP_RemOp : BP_BinaryTableOp<
    "rem", "remainder x % y, truncated as in C (pypto's TREM; as fmod)"> {
  let functor = "Fmod";
  let numpy = "np.fmod(x, y)";
  let params = "lhs, rhs, tmp=None";
  let spellings = ["pl", "tile"];
  let check = "integer remainder: a divisor is zero, or the lowest value " #
              "is divided by -1";
}
def BP_AndOp : BP_BinaryTableOp<"and", "bitwise and x & y"> {
  let dtypes = "integer";
  let functor = "And";
  let numpy = "np.bitwise_and(x, y)";
  let plName = "and_";
  let commutative = 1;
}
def BP_OrOp : BP_BinaryTableOp<"or", "bitwise or x | y"> {
  let dtypes = "integer";
  let functor = "Or";
  let numpy = "np.bitwise_or(x, y)";
  let plName = "or_";
  let commutative = 1;
}
def BP_XorOp : BP_BinaryTableOp<"xor", "bitwise exclusive or x ^ y"> {
  let dtypes = "integer";
  let functor = "Xor";
  let numpy = "np.bitwise_xor(x, y)";
  let params = "lhs, rhs, tmp=None";
  let commutative = 1;
}
def BP_ShlOp : BP_BinaryTableOp<"shl", "left shift x << y"> {
  let dtypes = "integer";
  let functor = "Shl";
  let numpy = "np.left_shift(x, y)";
  let check = "integer shift: a shift amount is negative or not less " #
              "than the element's width in bits";
}
def BP_ShrOp : BP_BinaryTableOp<
    "shr", "right shift x >> y (arithmetic for signed elements)"> {
  let dtypes = "integer";
  let functor = "Shr";
  let numpy = "np.right_shift(x, y)";
  let check = "integer shift: a shift amount is negative or not less " #
              "than the element's width in bits";
}

//===----------------------------------------------------------------------===//
// Elementwise with a scalar operand
//===----------------------------------------------------------------------===//

class BP_ScalarTableOp<string mnemonic, string what>
    : BP_TableOp<mnemonic, "scalar", [AllTypesMatch<["lhs", "result"]>]> {
  let summary = "elementwise " # what;
  let description = [{
    Elementwise on a `vec` tile and a scalar of its element type; the result
    has the tile's type.
  }];
  let params = "lhs, rhs";
  let arguments = (ins BP_Tile:$lhs, BP_Scalar:$rhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` type($rhs)";
}

def BP_AddsOp : BP_ScalarTableOp<"adds", "sum x + s"> {
  let functor = "Add";
  let numpy = "x + y";
}
def BP_SubsOp : BP_ScalarTableOp<"subs", "difference x - s"> {
  let functor = "Sub";
  let numpy = "x - y";
}
def BP_MulsOp : BP_ScalarTableOp<"muls", "product x * s"> {
  let functor = "Mul";
  let numpy = "x * y";
}
def BP_DivsOp : BP_ScalarTableOp<
    "divs", "quotient x / s (integer division truncates toward zero)"> {
  let functor = "Div";
  let numpy = "np.trunc(x / y).astype(x.dtype) if x.dtype.kind in 'iu' " #
              "else x / y";
  let check = "integer division: a divisor is zero, or the lowest value " #
              "is divided by -1";
}
def BP_MaximumsOp : BP_ScalarTableOp<"maximums", "maximum max(x, s)"> {
  let functor = "Max";
  let numpy = "np.maximum(x, y)";
  let spellings = ["pl", "tile"];
}
def BP_MinimumsOp : BP_ScalarTableOp<"minimums", "minimum min(x, s)"> {
  let functor = "Min";
  let numpy = "np.minimum(x, y)";
  let spellings = ["pl", "tile"];
}
def BP_FmodsOp : BP_ScalarTableOp<"fmods",
                                  "remainder of x / s with the sign of x"> {
  let functor = "Fmod";
  let numpy = "np.fmod(x, y)";
  let check = "integer remainder: a divisor is zero, or the lowest value " #
              "is divided by -1";
}
def BP_AndsOp : BP_ScalarTableOp<"ands", "bitwise and x & s"> {
  let dtypes = "integer";
  let functor = "And";
  let numpy = "np.bitwise_and(x, y)";
}
def BP_OrsOp : BP_ScalarTableOp<"ors", "bitwise or x | s"> {
  let dtypes = "integer";
  let functor = "Or";
  let numpy = "np.bitwise_or(x, y)";
}
def BP_XorsOp : BP_ScalarTableOp<"xors", "bitwise exclusive or x ^ s"> {
  let dtypes = "integer";
  let functor = "Xor";
  let numpy = "np.bitwise_xor(x, y)";
  let params = "lhs, rhs, tmp=None";
}
def BP_ShlsOp : BP_ScalarTableOp<"shls", "left shift x << s"> {
  let dtypes = "integer";
  let functor = "Shl";
  let numpy = "np.left_shift(x, y)";
  let check = "integer shift: a shift amount is negative or not less " #
              "than the element's width in bits";
}
def BP_ShrsOp : BP_ScalarTableOp<"shrs", "right shift x >> s"> {
  let dtypes = "integer";
  let functor = "Shr";
  let numpy = "np.right_shift(x, y)";
  let check = "integer shift: a shift amount is negative or not less " #
              "than the element's width in bits";
}
def BP_LreluOp : BP_ScalarTableOp<"lrelu",
                                  "leaky relu: x where x > 0, else slope * x"> {
  let dtypes = "float";
  let functor = "LeakyRelu";
  let numpy = "np.where(x > 0, x, y * x)";
  let params = "tile, slope";
  let spellings = ["pl", "tile"];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// The result type follows from the operand (Mx1 or 1xN, vec, of its element
// type); a builder may leave it out. Whether a given result type is right is
// the verifier's to say, with its own message.
class BP_ReductionTableOp<string mnemonic, string cls, string summaryText>
    : BP_TableOp<mnemonic, cls, [InferTypeOpInterface]> {
  let summary = summaryText;
  let description = [{
    Folds the op's functor over each row of a 2-D `vec` tile (row
    reductions), from its first element, in the compute type (fp32 for the
    16-bit floats), or over each column (column reductions), from its first
    row, each step rounded to the tile's dtype. A NaN in a row or column
    makes a maximum or minimum NaN, as in NumPy.
  }];
  let params = "tile, tmp_tile=None";
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let extraClassDeclaration = [{
    static ::mlir::LogicalResult inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr,
        ::mlir::OpaqueProperties, ::mlir::RegionRange,
        ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return ::mlir::bp::inferTableOpResults(getOperationName(), location,
                                             operands, results);
    }
    static bool isCompatibleReturnTypes(::mlir::TypeRange, ::mlir::TypeRange) {
      return true;
    }
  }];
}

class BP_ArgReductionTableOp<string mnemonic, string cls, string summaryText>
    : BP_ReductionTableOp<mnemonic, cls, summaryText> {
  let description = [{
    The index of the maximum (max) or minimum (min) of each row (row arg
    reductions: its column) or column (column arg reductions: its row, of a
    2-D tile) of a float `vec` tile, as an `i32`: the first one where
    several are equal, the first NaN where there is one (NumPy's argmax and
    argmin).
  }];
  let dtypes = "float";
}

class BP_RowReductionTableOp<string mnemonic, string what>
    : BP_ReductionTableOp<mnemonic, "row_reduction",
                          "row " # what # " of a 2-D vec tile into an Mx1 tile">;
class BP_ColReductionTableOp<string mnemonic, string what>
    : BP_ReductionTableOp<mnemonic, "col_reduction",
                          "column " # what # " of a 2-D vec tile into a 1xN tile">;

def BP_RowSumOp : BP_RowReductionTableOp<"row_sum", "sum"> {
  let functor = "Add";
  let numpy = "np.sum(x, axis=1, keepdims=True, dtype=np.float32 if x.dtype.kind == 'f' else x.dtype).astype(x.dtype)";
  let identity = "zero";
}
def BP_RowMaxOp : BP_RowReductionTableOp<"row_max", "maximum"> {
  let functor = "Max";
  let numpy = "np.max(x, axis=1, keepdims=True)";
  let identity = "lowest";
}
def BP_RowMinOp : BP_RowReductionTableOp<"row_min", "minimum"> {
  let functor = "Min";
  let numpy = "np.min(x, axis=1, keepdims=True)";
  let identity = "highest";
}
def BP_ColSumOp : BP_ColReductionTableOp<"col_sum", "sum"> {
  let description = [{
    Adds each column of a 2-D `vec` tile row by row, from its first row,
    each sum rounded to the tile's dtype, as pypto's TCOLSUM does (an FP16
    column sum is FP16 additions). With pypto's `tmp_tile`
    (`pl.col_sum(t, tmp)`), pl.col_sum of floats adds in a binary tree
    instead, as TCOLSUM's 4-operand form: rows 2k and 2k + 1 into row k,
    an odd last row into row 0, until one row is left, each sum rounded (a
    composition of row windows and adds). Integer sums wrap.
  }];
  let functor = "Add";
  let numpy = "np.add.accumulate(x, axis=0, dtype=x.dtype)[-1:]";
  let identity = "zero";
}
def BP_ColMaxOp : BP_ColReductionTableOp<"col_max", "maximum"> {
  let functor = "Max";
  let numpy = "np.max(x, axis=0, keepdims=True)";
  let identity = "lowest";
}

def BP_ColMinOp : BP_ColReductionTableOp<"col_min", "minimum"> {
  let functor = "Min";
  let numpy = "np.min(x, axis=0, keepdims=True)";
  let identity = "highest";
}
def BP_RowProdOp : BP_RowReductionTableOp<"row_prod", "product"> {
  let functor = "Mul";
  let numpy = "np.prod(x, axis=1, keepdims=True, dtype=np.float32 if x.dtype.kind == 'f' else x.dtype).astype(x.dtype)";
  let identity = "one";
}
def BP_ColProdOp : BP_ColReductionTableOp<"col_prod", "product"> {
  let functor = "Mul";
  let numpy = "np.multiply.accumulate(x, axis=0, dtype=x.dtype)[-1:]";
  let identity = "one";
}

//===----------------------------------------------------------------------===//
// Arg reductions: where the extremum of each row or column is
//===----------------------------------------------------------------------===//

class BP_RowArgReductionTableOp<string mnemonic, string what>
    : BP_ArgReductionTableOp<mnemonic, "row_arg_reduction",
                             "column of the row " # what #
                             " of a 2-D vec tile, as an Mx1 i32 tile">;
class BP_ColArgReductionTableOp<string mnemonic, string what>
    : BP_ArgReductionTableOp<mnemonic, "col_arg_reduction",
                             "row of the column " # what #
                             " of a 2-D vec tile, as a 1xN i32 tile">;

def BP_RowArgmaxOp : BP_RowArgReductionTableOp<"row_argmax", "maximum"> {
  let functor = "Max";
  let numpy = "np.argmax(x, axis=1, keepdims=True).astype(np.int32)";
  let identity = "lowest";
}
def BP_RowArgminOp : BP_RowArgReductionTableOp<"row_argmin", "minimum"> {
  let functor = "Min";
  let numpy = "np.argmin(x, axis=1, keepdims=True).astype(np.int32)";
  let identity = "highest";
}
def BP_ColArgmaxOp : BP_ColArgReductionTableOp<"col_argmax", "maximum"> {
  let functor = "Max";
  let numpy = "np.argmax(x, axis=0, keepdims=True).astype(np.int32)";
  let identity = "lowest";
}
def BP_ColArgminOp : BP_ColArgReductionTableOp<"col_argmin", "minimum"> {
  let functor = "Min";
  let numpy = "np.argmin(x, axis=0, keepdims=True).astype(np.int32)";
  let identity = "highest";
}

#endif // BLOCKPIPE_DIALECT_BPOPTABLE_TD
