// The StableHLO constraints on send, recv and collective_permute, and where
// the mesh ops may appear.
// RUN: bp-opt %s -split-input-file -verify-diagnostics

module attributes {bp.num_devices = 4 : i64} {
func.func @pairs_not_n_by_2(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{source_target_pairs must have shape N x 2, got 1x3}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @pairs_rank_1(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{source_target_pairs must have shape N x 2, got 2}}
  %r = bp.recv %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[0, 1]> : tensor<2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @duplicate_source(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{source 0 appears twice in source_target_pairs}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @duplicate_target(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{target 2 appears twice in source_target_pairs}}
  %r = bp.collective_permute %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [1, 2]]> : tensor<2x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @id_too_large(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{device id 4 in source_target_pairs is outside [0, 4)}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[3, 4]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @negative_id(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{device id -1 in source_target_pairs is outside [0, 4)}}
  %r = bp.recv %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[-1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

func.func @no_num_devices(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{needs the enclosing module to declare 'bp.num_devices' to check its device ids}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @empty_device_pairs(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{a device-to-device transfer needs at least one source-target pair}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<> : tensor<0x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @send_host_channel_mismatch(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{channel type 1 does not match a host transfer, which needs channel type 2}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, is_host_transfer = true, source_target_pairs = dense<> : tensor<0x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @recv_host_channel_mismatch(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{channel type 2 does not match a host transfer, which needs channel type 3}}
  %r = bp.recv %t {channel_handle = #bp.channel<handle = 1, type = 2>, is_host_transfer = true, source_target_pairs = dense<> : tensor<0x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @device_channel_mismatch(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{channel type 3 does not match a device-to-device transfer, which needs channel type 1}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 3>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @p2p_in_kernel(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{'bp.send' op must be inside an orchestration or pipeline function, not a 'incore' function}}
  bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @device_id_in_kernel() attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{'bp.device_id' op must be inside an orchestration function, not a 'incore' function}}
  %d = bp.device_id : index
  return
}
}

// -----

// The custom form takes the destination's type from the operand; the generic
// form can spell another.
module attributes {bp.num_devices = 4 : i64} {
func.func @permute_dest_type(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<8x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{failed to verify that dest has the operand's type}}
  %r = "bp.collective_permute"(%x, %y) <{channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}> : (!bp.tensor<16x16xf32>, !bp.tensor<8x16xf32>) -> !bp.tensor<16x16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @permute_result_type(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{failed to verify that all of {operand, result} have same type}}
  %r = "bp.collective_permute"(%x, %y) <{channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}> : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf16>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @permute_into_operand(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{writes into its own operand: a device receives into the destination before it sends the operand, so it must be another tensor}}
  %r = bp.collective_permute %x into %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16x16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @local_zero_out_of_range(%y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{device id 4 is outside [0, 4)}}
  %z = bp.local_zero %y devices([0, 4]) : !bp.tensor<16x16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @local_zero_twice(%y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{device 2 appears twice}}
  %z = bp.local_zero %y devices([2, 2]) : !bp.tensor<16x16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 4 : i64} {
func.func @local_zero_in_kernel(%y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{'bp.local_zero' op must be inside an orchestration or pipeline function, not a 'incore' function}}
  %z = bp.local_zero %y devices([0]) : !bp.tensor<16x16xf32>
  return
}
}

// -----

// A stage boundary whose types differ names both stages.
module attributes {bp.num_devices = 2 : i64} {
  func.func @s0(%x: !bp.tensor<8x16xf32>, %h: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<8x16xf32>
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !bp.tensor<8x16xf32>
  }
  func.func @s1(%x: !bp.tensor<8x8xf32>, %h: !bp.tensor<8x8xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<8x8xf32>
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    return %h : !bp.tensor<8x8xf32>
  }
  func.func @forward(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x8xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<16x8xf32>
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 2 : i64} {
    %b = bp.tensor_create : !bp.tensor<8x16xf32>
    %h = bp.stage @s0(%x, %b) : (!bp.tensor<16x16xf32>, !bp.tensor<8x16xf32>) -> !bp.tensor<8x16xf32>
    // expected-error @+1 {{stage boundary: 's0' writes f32 8x16 but 's1' reads its parameter 0 as f32 8x8}}
    %y1 = bp.stage @s1(%h, %y) : (!bp.tensor<8x16xf32>, !bp.tensor<16x8xf32>) -> !bp.tensor<16x8xf32>
    return %y1 : !bp.tensor<16x8xf32>
  }
}

// -----

// A stage argument neither whole nor split into the microbatches.
module attributes {bp.num_devices = 1 : i64} {
  func.func @s0(%x: !bp.tensor<8x16xf32>, %h: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<8x16xf32>
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !bp.tensor<8x16xf32>
  }
  func.func @forward(%x: !bp.tensor<24x16xf32>, %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<16x16xf32>
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 2 : i64} {
    // expected-error @+1 {{passes f32 24x16 as 's0' parameter 0, which is f32 8x16 (or, split into 2 microbatches, 16 rows of it)}}
    %y1 = bp.stage @s0(%x, %y) : (!bp.tensor<24x16xf32>, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
    return %y1 : !bp.tensor<16x16xf32>
  }
}

// -----

func.func @s0(%x: !bp.tensor<8xf32>, %h: !bp.tensor<8xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<8xf32>
    attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{runs a stage, which only a pipeline function does}}
  %r = bp.stage @s0(%x, %h) : (!bp.tensor<8xf32>, !bp.tensor<8xf32>) -> !bp.tensor<8xf32>
  return %r : !bp.tensor<8xf32>
}
