module {
  func.func @mm_aic(%arg0: !bp.tensor<16x16xf32>, %arg1: !bp.tensor<36864xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 36864 : i64} {
    %c0 = arith.constant 0 : index
    bp.initialize_pipe id(0) dir_mask(1) slot_size(4096) buffer(%arg1 : !bp.tensor<36864xi8>) offset(0)
    bp.initialize_pipe id(1) dir_mask(3) slot_size(1024) slot_num(2) buffer(%arg1 : !bp.tensor<36864xi8>) offset(32768)
    %0 = bp.load %arg0[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %1 = bp.load %arg0[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %2 = bp.matmul %0, %1 : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    bp.tpush c2v %2 pipe(0) : !bp.tile<16x16xf32, acc>
    return
  }
  func.func @mm_aiv(%arg0: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}, %arg1: !bp.tensor<36864xi8> {bp.gm_pipe_buffer}) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 36864 : i64} {
    %c0 = arith.constant 0 : index
    bp.initialize_pipe id(1) dir_mask(3) slot_size(1024) slot_num(2) buffer(%arg1 : !bp.tensor<36864xi8>) offset(32768)
    bp.initialize_pipe id(0) dir_mask(1) slot_size(4096) buffer(%arg1 : !bp.tensor<36864xi8>) offset(0)
    %0 = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
    %1 = bp.store %0, %arg0[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    bp.tfree c2v pipe(0)
    return %1 : !bp.tensor<16x16xf32>
  }
  func.func @mm(%arg0: !bp.tensor<16x16xf32>, %arg1: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}, %arg2: !bp.tensor<36864xi8> {bp.gm_pipe_buffer}) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind group>, bp.pipe_buffer_bytes = 36864 : i64} {
    call @mm_aic(%arg0, %arg2) : (!bp.tensor<16x16xf32>, !bp.tensor<36864xi8>) -> ()
    %0 = call @mm_aiv(%arg1, %arg2) : (!bp.tensor<16x16xf32>, !bp.tensor<36864xi8>) -> !bp.tensor<16x16xf32>
    return %0 : !bp.tensor<16x16xf32>
  }
  func.func @push_helper(%arg0: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(3) dir_mask(2) slot_size(512) slot_num(16) buffer(%arg0 : !bp.tensor<8192xi8>) offset(0)
    %0 = bp.full 1.000000e+00 : f32 -> !bp.tile<8x16xf32, vec>
    bp.tpush v2c %0 pipe(3) : !bp.tile<8x16xf32, vec>
    return
  }
  func.func @nested_aiv(%arg0: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 8192 : i64} {
    call @push_helper(%arg0) : (!bp.tensor<8192xi8>) -> ()
    return
  }
  func.func @nested_aic(%arg0: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(3) dir_mask(2) slot_size(512) slot_num(16) buffer(%arg0 : !bp.tensor<8192xi8>) offset(0)
    %0 = bp.tpop v2c pipe(3) : !bp.tile<8x16xf32, mat>
    bp.tfree v2c pipe(3)
    return
  }
  func.func @nested(%arg0: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind group>, bp.pipe_buffer_bytes = 8192 : i64} {
    call @nested_aic(%arg0) : (!bp.tensor<8192xi8>) -> ()
    call @nested_aiv(%arg0) : (!bp.tensor<8192xi8>) -> ()
    return
  }
  func.func @no_pipes(%arg0: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
    return
  }
  func.func @main(%arg0: !bp.tensor<16x16xf32>, %arg1: index) attributes {bp.kind = #bp<kind orchestration>} {
    %0 = bp.tensor_create : !bp.tensor<16x16xf32>
    %1 = bp.tensor_create pipe_buffer : !bp.tensor<36864xi8>
    %2 = bp.launch @mm(%arg0, %0, %1) core_num(4) : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<36864xi8>) -> !bp.tensor<16x16xf32>
    %3 = bp.tensor_create pipe_buffer : !bp.tensor<36864xi8>
    %4 = bp.launch @mm(%arg0, %2, %3) core_num(%arg1) : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<36864xi8>) -> !bp.tensor<16x16xf32>
    %5 = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
    bp.launch @nested(%5) core_num(2) : (!bp.tensor<8192xi8>) -> ()
    bp.launch @no_pipes(%arg0) core_num(2) : (!bp.tensor<16x16xf32>) -> ()
    return
  }
}

