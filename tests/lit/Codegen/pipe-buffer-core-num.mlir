// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// The orchestration allocates a pipe buffer of per_block * core_num bytes.
// A dynamic core_num is a live SSA value: the allocation is emitted once that
// value is defined, even where the tensor_create comes before it in the IR,
// and multiplies by it. A constant core_num gives a literal.

module {
  func.func @k(%x: !bp.tensor<?x16xf32>, %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(v2c) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    return
  }

  // The per-block size is one named int64_t constant (so that a product
  // beyond an int cannot wrap).
  // CHECK-LABEL: // ---- FILE: orchestration/dynamic.cpp
  // CHECK: constexpr int64_t bp_k_pipe_bytes_per_block = 8192;
  // CHECK: void dynamic(
  // CHECK-NOT: createPipeBuffer
  // CHECK: const int64_t blocks =
  // CHECK-NEXT: {{.*}}x.shape()[0]{{.*}};
  // A core_num computed at run time is checked before anything is sized by it.
  // CHECK-NEXT: if (blocks <= 0)
  // CHECK-NEXT: throw rt::Error("core_num of the launch of 'k' at pipe-buffer-core-num.mlir:{{[0-9]+}} is " +
  // CHECK-NEXT: std::to_string(blocks) + "; it must be positive");
  // CHECK-NEXT: // Pipe buffer of the launch of 'k': a slice for each of its `blocks` blocks.
  // CHECK-NEXT: rt::Tensor gm_pipe_buffer_0 = bp_graph.createPipeBuffer(
  // CHECK-NEXT: "gm_pipe_buffer_0", bp_k_pipe_bytes_per_block * blocks);
  // CHECK-NEXT: bp_graph.submit(bp_launchable_k(), rt::launchSpec(/*block_num=*/blocks),
  // CHECK-NEXT: {rt::Arg::in(x),
  // CHECK-NEXT: rt::Arg::scalar<int64_t>(x.shape()[0]),
  // CHECK-NEXT: rt::Arg::pipeBuffer(gm_pipe_buffer_0, bp_k_pipe_bytes_per_block)});
  func.func @dynamic(%x: !bp.tensor<?x16xf32>)
      attributes {bp.kind = #bp<kind orchestration>} {
    %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
    %c16 = arith.constant 16 : index
    %rows = bp.dim %x, 0 : !bp.tensor<?x16xf32>
    %blocks = arith.divui %rows, %c16 : index
    bp.launch @k(%x, %buf) core_num(%blocks) : (!bp.tensor<?x16xf32>, !bp.tensor<8192xi8>) -> ()
    return
  }

  // CHECK-LABEL: // ---- FILE: orchestration/fixed.cpp
  // CHECK: constexpr int64_t bp_k_pipe_bytes_per_block = 8192;
  // CHECK: // Pipe buffer of the launch of 'k': a slice for each of its 6 blocks.
  // CHECK-NEXT: rt::Tensor gm_pipe_buffer_0 = bp_graph.createPipeBuffer(
  // CHECK-NEXT: "gm_pipe_buffer_0", bp_k_pipe_bytes_per_block * 6);
  // CHECK: rt::launchSpec(/*block_num=*/6)
  func.func @fixed(%x: !bp.tensor<?x16xf32>)
      attributes {bp.kind = #bp<kind orchestration>} {
    %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
    bp.launch @k(%x, %buf) core_num(6) : (!bp.tensor<?x16xf32>, !bp.tensor<8192xi8>) -> ()
    return
  }

  // A literal product beyond an int is computed in int64_t (it would wrap
  // and size the buffer too small).
  // CHECK-LABEL: // ---- FILE: orchestration/huge.cpp
  // CHECK: constexpr int64_t bp_k_pipe_bytes_per_block = 8192;
  // CHECK: rt::Tensor gm_pipe_buffer_0 = bp_graph.createPipeBuffer(
  // CHECK-NEXT: "gm_pipe_buffer_0", bp_k_pipe_bytes_per_block * 400000);
  func.func @huge(%x: !bp.tensor<?x16xf32>)
      attributes {bp.kind = #bp<kind orchestration>} {
    %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
    bp.launch @k(%x, %buf) core_num(400000) : (!bp.tensor<?x16xf32>, !bp.tensor<8192xi8>) -> ()
    return
  }

  // A core_num that is a parameter is defined before everything.
  // CHECK-LABEL: // ---- FILE: orchestration/parameter.cpp
  // CHECK: void parameter({{.*}}, int64_t n)
  // CHECK: if (n <= 0)
  // CHECK: // Pipe buffer of the launch of 'k': a slice for each of its `n` blocks.
  // CHECK-NEXT: rt::Tensor gm_pipe_buffer_0 = bp_graph.createPipeBuffer(
  // CHECK-NEXT: "gm_pipe_buffer_0", bp_k_pipe_bytes_per_block * n);
  // CHECK: rt::launchSpec(/*block_num=*/n)
  func.func @parameter(%x: !bp.tensor<?x16xf32>, %n: index)
      attributes {bp.kind = #bp<kind orchestration>} {
    %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
    bp.launch @k(%x, %buf) core_num(%n) : (!bp.tensor<?x16xf32>, !bp.tensor<8192xi8>) -> ()
    return
  }
}
