// Launches, tensor creation, function kinds and their attributes.
// RUN: bp-opt %s -split-input-file -verify-diagnostics

func.func @k(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @zero_core_num(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{core_num must be positive, got 0}}
  bp.launch @k(%x) core_num(0) : (!bp.tensor<16xf32>) -> ()
  return
}

// -----

func.func @k(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @negative_core_num(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{core_num must be positive, got -2}}
  bp.launch @k(%x) core_num(-2) : (!bp.tensor<16xf32>) -> ()
  return
}

// -----

func.func @missing_callee(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{launches 'nowhere', which is not a function in this module}}
  bp.launch @nowhere(%x) core_num(1) : (!bp.tensor<16xf32>) -> ()
  return
}

// -----

func.func @other(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  return
}
func.func @launch_orchestration(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{launches 'other', which is not an incore, aic, aiv or group function}}
  bp.launch @other(%x) core_num(1) : (!bp.tensor<16xf32>) -> ()
  return
}

// -----

func.func @k(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @wrong_arg_count(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{passes 2 arguments to 'k', which takes 1}}
  bp.launch @k(%x, %x) core_num(1) : (!bp.tensor<16xf32>, !bp.tensor<16xf32>) -> ()
  return
}

// -----

func.func @k(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @wrong_arg_type(%x: !bp.tensor<16xf16>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{argument 0 has type '!bp.tensor<16xf16>' but 'k' expects '!bp.tensor<16xf32>'}}
  bp.launch @k(%x) core_num(1) : (!bp.tensor<16xf16>) -> ()
  return
}

// -----

func.func @k(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @wrong_results(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{result types differ from those of 'k'}}
  %r = bp.launch @k(%x) core_num(1) : (!bp.tensor<16xf32>) -> !bp.tensor<16xf32>
  return
}

// -----

func.func @k(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @launch_from_kernel(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{'bp.launch' op must be inside an orchestration function, not a 'incore' function}}
  bp.launch @k(%x) core_num(1) : (!bp.tensor<16xf32>) -> ()
  return
}

// -----

func.func @create_needs_sizes() attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{expects one size operand per dynamic dimension (1), got 0}}
  %t = bp.tensor_create : !bp.tensor<?x16xf32>
  return
}

// -----

func.func @bad_pipe_buffer() attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{a pipe buffer is a static 1-D i8 tensor of its per-block bytes, got '!bp.tensor<16x16xf32>'}}
  %t = bp.tensor_create pipe_buffer : !bp.tensor<16x16xf32>
  return
}

// -----

func.func @create_outside_orchestration() {
  // expected-error @+1 {{'bp.tensor_create' op must be inside an orchestration or pipeline function (a func.func with a bp.kind attribute)}}
  %t = bp.tensor_create : !bp.tensor<16xf32>
  return
}

// -----

func.func @dim_out_of_range(%t: !bp.tensor<?x16xf32>) -> index attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{dimension 2 is out of range for a rank-2 tensor}}
  %d = bp.dim %t, 2 : !bp.tensor<?x16xf32>
  return %d : index
}

// -----

// expected-error @+1 {{'bp.device' is only allowed on orchestration functions}}
func.func @device_on_kernel() attributes {bp.kind = #bp<kind incore>, bp.device = 0 : i64} {
  return
}

// -----

module attributes {bp.num_devices = 2 : i64} {
// expected-error @+1 {{device 2 is out of range: the module has 2 devices}}
func.func @device_out_of_range() attributes {bp.kind = #bp<kind orchestration>, bp.device = 2 : i64} {
  return
}
}

// -----

// expected-error @+1 {{'bp.device' must be a non-negative integer}}
func.func @negative_device() attributes {bp.kind = #bp<kind orchestration>, bp.device = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'bp.microbatches' must be a positive integer}}
func.func @zero_microbatches() attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{'bp.num_devices' must be a positive integer on a module}}
module attributes {bp.num_devices = 0 : i64} {
}

// -----

// expected-error @+1 {{'bp.kind' must be a #bp<kind ...> on a func.func}}
func.func @kind_not_enum() attributes {bp.kind = "aic"} {
  return
}

// -----

// expected-error @+1 {{unknown bp attribute 'bp.colour'}}
func.func @unknown_attr() attributes {bp.colour = 1 : i64} {
  return
}

// -----

// expected-error @+1 {{argument 0 has a direction but is not a GM tensor}}
func.func @dir_on_scalar(%n: index {bp.dir = #bp<dir out>}) attributes {bp.kind = #bp<kind incore>} {
  return
}

// -----

func.func @aiv() attributes {bp.kind = #bp<kind aiv>} {
  return
}
func.func @group() attributes {bp.kind = #bp<kind group>} {
  %c = arith.constant 0 : index
  // expected-error @+1 {{cannot be in a group function: a group only calls its aic and aiv functions}}
  %d = arith.addi %c, %c : index
  call @aiv() : () -> ()
  return
}

// -----

func.func @inc() attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @group_calls_incore() attributes {bp.kind = #bp<kind group>} {
  // expected-error @+1 {{a group function may only call aic and aiv functions, but 'inc' is not one}}
  call @inc() : () -> ()
  return
}

// -----

func.func @aiv() attributes {bp.kind = #bp<kind aiv>} {
  return
}
// expected-error @+1 {{a group calls at most one aic and one aiv function, found 0 and 2}}
func.func @group_two_aiv() attributes {bp.kind = #bp<kind group>} {
  call @aiv() : () -> ()
  call @aiv() : () -> ()
  return
}

// -----

func.func @barrier() attributes {bp.kind = #bp<kind aiv>} {
  bp.syncall
  return
}
func.func @group_barrier() attributes {bp.kind = #bp<kind group>} {
  call @barrier() : () -> ()
  return
}
func.func @launches_without_sync_start() attributes {bp.kind = #bp<kind orchestration>} {
  bp.launch @barrier() core_num(2) sync_start : () -> ()
  // expected-error @+1 {{launches 'group_barrier', which calls pl.system.syncall (a barrier of all its blocks), without sync_start: its blocks must all run at once}}
  bp.launch @group_barrier() core_num(2) : () -> ()
  return
}

// -----

// bp.written_whole (bp-check-output-coverage's mark) is for Out parameters.
// expected-error @+1 {{'bp.written_whole' marks a func.func parameter of direction #bp<dir out>}}
func.func @written_whole_on_an_input(%x: !bp.tensor<16xf32> {bp.dir = #bp<dir in>, bp.written_whole}) attributes {bp.kind = #bp<kind orchestration>} {
  return
}

// -----

// A view's window: its rank and element type are its source's, one offset
// per dim, one size per dynamic dim of the result, inside the source where
// that is known here.
func.func @view_rank(%x: !bp.tensor<64x64xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{result '!bp.tensor<64xf32>' must have the element type and rank of '!bp.tensor<64x64xf32>'}}
  %v = bp.tensor_view %x[%c0, %c0] : !bp.tensor<64x64xf32> -> !bp.tensor<64xf32>
  return
}

// -----

func.func @view_sizes(%x: !bp.tensor<64x64xf32>, %n: index) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{takes one size per dynamic dim of the result (1), got 0}}
  %v = bp.tensor_view %x[%c0, %c0] : !bp.tensor<64x64xf32> -> !bp.tensor<?x64xf32>
  return
}

// -----

func.func @view_outside(%x: !bp.tensor<64x64xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %c56 = arith.constant 56 : index
  // expected-error @+1 {{window of 16 at 56 is outside dim 0 of '!bp.tensor<64x64xf32>'}}
  %v = bp.tensor_view %x[%c56, %c0] : !bp.tensor<64x64xf32> -> !bp.tensor<16x64xf32>
  return
}

// -----

// A launch takes a tensor whose known dims agree with the parameter's; a
// dim known on one side only is checked when it runs (or passed).
func.func @k16(%x: !bp.tensor<16x64xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @launch_known_dims_disagree(%x: !bp.tensor<?x32xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{argument 0 has type '!bp.tensor<?x32xf32>' but 'k16' expects '!bp.tensor<16x64xf32>'}}
  bp.launch @k16(%x) core_num(1) : (!bp.tensor<?x32xf32>) -> ()
  return
}
