// bp-infer-pipe-types reports, at the pop, what it cannot type and the pops
// whose type is not one their ring carries.
// RUN: bp-opt --bp-infer-pipe-types --split-input-file --verify-diagnostics %s

// No group: nothing pushes into the pipe.
func.func @alone() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{cannot infer the tile type of this pop from pipe 0 (c2v): the other half of the group pushes nothing into it; give the pop its type}}
  %t = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
  return
}

// -----

func.func @two_kinds(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, mat>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<8x16xf32, mat>
  bp.tpush c2v %a pipe(0) : !bp.tile<16x16xf32, mat>
  bp.tpush c2v %b pipe(0) : !bp.tile<8x16xf32, mat>
  return
}
func.func @pops() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{cannot infer the tile type of this pop from pipe 0 (c2v): the other half of the group pushes tiles of different types into it (16x16xf32, 8x16xf32); give the pop its type}}
  %t = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
  %u = bp.tpop c2v pipe(0) : !bp.tile<8x16xf32, vec>
  return
}
func.func @grp(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind group>} {
  call @two_kinds(%x) : (!bp.tensor<16x16xf32>) -> ()
  call @pops() : () -> ()
  return
}

// -----

// Each half pops only what follows from its own pop.
func.func @cube() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024)
  // expected-error @+1 {{cannot infer the tile type of this pop from pipe 0 (v2c): the tiles pushed into it have no known type either (they come from pops too); give one of the pops its type}}
  %t = bp.tpop v2c pipe(0) : !bp.tile<*, mat>
  bp.tpush c2v %t pipe(0) : !bp.tile<*, mat>
  return
}
func.func @vec() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024)
  %t = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
  bp.tpush v2c %t pipe(0) : !bp.tile<*, vec>
  return
}
func.func @grp() attributes {bp.kind = #bp<kind group>} {
  call @cube() : () -> ()
  call @vec() : () -> ()
  return
}

// -----

// A typed pop (annotated by the user) that its ring does not carry.
func.func @cube(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, mat>
  bp.tpush c2v %a pipe(0) : !bp.tile<16x16xf32, mat>
  return
}
func.func @vec() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{pops 8x32xf32 tiles, but pipe 0 (c2v) carries 16x16xf32 from the other half of the group}}
  %t = bp.tpop c2v pipe(0) : !bp.tile<8x32xf32, vec>
  return
}
func.func @grp(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind group>} {
  call @cube(%x) : (!bp.tensor<16x16xf32>) -> ()
  call @vec() : () -> ()
  return
}

// -----

// A loop joins a popped tile with a typed one of another shape.
func.func @cube(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, mat>
  bp.tpush c2v %a pipe(0) : !bp.tile<16x16xf32, mat>
  return
}
func.func @vec() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  %t = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
  // expected-error @+1 {{this tile must keep one type, but it joins 16x16xf32 and 8x8xf32 tiles}}
  %j = builtin.unrealized_conversion_cast %t : !bp.tile<*, vec> to !bp.tile<8x8xf32, vec>
  return
}
func.func @grp(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind group>} {
  call @cube(%x) : (!bp.tensor<16x16xf32>) -> ()
  call @vec() : () -> ()
  return
}
