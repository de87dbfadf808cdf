// RUN: bp-opt %s -split-input-file -verify-diagnostics
// RUN: bp-translate --bp-to-cpp -o - %S/Inputs/unplanned.mlir | FileCheck %s --check-prefix=PLANNED

// bp-plan-kernels' attributes are checked where they are written: codegen
// trusts them.

func.func @panels_on_a_store(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{'bp.placement' #bp<placement panels> does not apply to this op (in_place: a load, move or tpop; panels, shared_panels: a load; into_store: an op whose only use is a store)}}
  %o = bp.store %t, %out[%c0, %c0] {bp.placement = #bp<placement panels>} : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

func.func @into_a_second_use(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{'bp.placement' #bp<placement into_store> does not apply to this op}}
  %s = bp.add %t, %t {bp.placement = #bp<placement into_store>} : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %u = bp.mul %s, %s : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %o = bp.store %u, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

func.func @checked_past_the_operands(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'bp.checked' must be an array<i64> of the op's operand indices}}
  %t = bp.load %x[%c0, %c0] {bp.checked = array<i64: 3>} : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

// expected-error @+1 {{'bp.launch_blocks' must be a positive integer on a kernel (incore, aic, aiv or group function)}}
func.func @blocks_of_an_orchestration() attributes {bp.kind = #bp<kind orchestration>, bp.launch_blocks = 2 : i64} {
  return
}

// -----

// expected-error @+1 {{'bp.may_fail_midway' must be a unit attribute on a kernel (incore, aic, aiv or group function)}}
func.func @fails_with_a_number() attributes {bp.kind = #bp<kind aiv>, bp.may_fail_midway = 1 : i64} {
  return
}

// -----

// expected-error @+1 {{'bp.planned' must be a unit attribute on a module}}
module attributes {bp.planned = 1 : i64} {
}

// A module no pass planned: bp-translate plans it first, so the window no
// proof keeps in bounds is checked.
// PLANNED: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at unplanned.mlir
