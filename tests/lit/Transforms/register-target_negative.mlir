// bp-register-target's errors: an unknown bundled spec (naming the bundled
// ones), both options at once, a slot_num above the target's limit.
// RUN: not bp-opt --bp-register-target=target=ascend %s 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not bp-opt "--bp-register-target=target=cuda spec=%S/Inputs/two-slots.json" %s 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not bp-opt --bp-register-target=spec=%S/Inputs/two-slots.json --bp-inject-gm-pipe-buffer %S/Inputs/slots-32.mlir 2>&1 | FileCheck %s --check-prefix=LIMIT
// NAME: error: bp-register-target: no bundled device spec named 'ascend' (bundled: cpu-sim, cuda)
// BOTH: error: bp-register-target: give target= (a bundled spec) or spec= (a file), not both
// LIMIT: slots-32.mlir:4:3: error: 'bp.initialize_pipe' op slot_num 32 is more than the 16 slots a ring may have on target 'two-slots' (pipe.max_slot_num)
func.func @f() attributes {bp.kind = #bp<kind aiv>} {
  return
}
