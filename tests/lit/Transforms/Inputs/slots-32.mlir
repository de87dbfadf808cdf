// Input of register-target_negative.mlir: 32 slots, more than two-slots.json
// allows.
func.func @f() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(64) slot_num(32)
  return
}
