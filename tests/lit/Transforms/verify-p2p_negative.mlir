// Transfers bp-verify-p2p rejects; each error names one op and a note the
// other.
// RUN: bp-opt --bp-verify-p2p --split-input-file --verify-diagnostics %s

module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  // expected-error @+1 {{has no matching recv on channel 1 with source_target_pairs [[0, 1]]}}
  bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
}

// -----

// The recv on the same channel expects the opposite direction.
module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  // expected-note @+2 {{a send on channel 1 has source_target_pairs [[0, 1]]}}
  // expected-error @+1 {{has no matching recv on channel 1 with source_target_pairs [[0, 1]]}}
  bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
func.func @stage1(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  // expected-note @+2 {{a recv on channel 1 has source_target_pairs [[1, 0]]}}
  // expected-error @+1 {{has no matching send on channel 1 with source_target_pairs [[1, 0]]}}
  %r = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
}

// -----

// Two recvs for one send: the second has nothing to receive.
module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  // expected-note @+1 {{the last send with this channel and pairs, matched by an earlier recv}}
  bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
func.func @stage1(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  %r = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  // expected-error @+1 {{has no matching send on channel 1 with source_target_pairs [[0, 1]] (each send matches exactly one recv)}}
  %r2 = bp.recv %r {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  // expected-error @+1 {{sends '!bp.tensor<32x64xf32>' on channel 1 but the matching recv receives '!bp.tensor<64x32xf32>'}}
  bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
func.func @stage1(%h: !bp.tensor<64x32xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  // expected-note @+1 {{the matching recv}}
  %r = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<64x32xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%h: !bp.tensor<32x64xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  // expected-error @+1 {{sends '!bp.tensor<32x64xf32>' on channel 1 but the matching recv receives '!bp.tensor<32x64xf16>'}}
  bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}
func.func @stage1(%h: !bp.tensor<32x64xf16>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  // expected-note @+1 {{the matching recv}}
  %r = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf16>
  return
}
}

// -----

// Each stage receives before it sends: device 0 waits for device 1, which
// waits for device 0.
module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  // expected-error @+1 {{deadlocks: device 0 waits here to receive from device 1, and the devices wait for each other in a cycle}}
  %r = bp.recv %b {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
func.func @stage1(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  // expected-note @+1 {{device 1 waits here to receive from device 0}}
  %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  // expected-note @+1 {{the send device 0 waits for, which comes after that device's own wait}}
  bp.send %x {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

// A ring shift in one recv-then-send phase: every device waits for its
// predecessor (bp-decompose-collective-permute splits it in two).
module attributes {bp.num_devices = 3 : i64} {
func.func @ring(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %b = bp.tensor_create : !bp.tensor<16xf32>
  // expected-error @+3 {{deadlocks: device 0 waits here to receive from device 2}}
  // expected-note @+2 {{device 2 waits here to receive from device 1}}
  // expected-note @+1 {{device 1 waits here to receive from device 0}}
  %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>} : !bp.tensor<16xf32>
  // expected-note @+1 {{the send device 0 waits for}}
  bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

// The send's function is placed on device 1, so device 0 never sends.
module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  // expected-note @+1 {{the matching send, not run on device 0}}
  bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
func.func @stage1(%b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  // expected-error @+1 {{waits forever on device 1: device 0 never runs the matching send}}
  %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

// Loops count by trip count: four sends, three recvs. The send in the loop
// is reported once, not once per unmatched iteration.
module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{has no matching recv on channel 1 with source_target_pairs [[0, 1]] (each recv matches exactly one send); 4 sends and 3 recvs run with this channel and pairs}}
    bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  return
}
func.func @stage1(%b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    // expected-note @+1 {{the last recv with this channel and pairs, matched by an earlier send}}
    %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  return
}
}

// -----

// Only a loop's third iteration deadlocks: device 1 receives the third time
// from device 0, whose third send comes after device 0's own wait for
// device 1.
module attributes {bp.num_devices = 2 : i64} {
func.func @stage0(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  // expected-error @+1 {{deadlocks: device 0 waits here to receive from device 1, and the devices wait for each other in a cycle}}
  %r = bp.recv %b {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
func.func @stage1(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    // expected-note @+1 {{device 1 waits here to receive from device 0}}
    %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  // expected-note @+1 {{the send device 0 waits for, which comes after that device's own wait}}
  bp.send %x {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  return
}
}

// -----

// A loop bound computed at run time leaves the number of transfers unknown.
module attributes {bp.num_devices = 2 : i64} {
func.func @dynamic_trip_count(%x: !bp.tensor<16xf32>, %n: index) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{the loop; its bounds and step must be arith.constant ops}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{is inside a loop whose trip count is not known at compile time; the number of transfers must be known at compile time to match each send with its recv}}
    bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  return
}
}

// -----

module attributes {bp.num_devices = 2 : i64} {
func.func @under_condition(%b: !bp.tensor<16xf32>, %flag: i1) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-note @+1 {{the condition}}
  scf.if %flag {
    // expected-error @+1 {{is under a condition (scf.if); the number of transfers must be known at compile time to match each send with its recv}}
    %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  return
}
}

// -----

// 1000 x 1000 iterations of a swap's two transfers: too many to simulate.
// The inner loop alone (2000 transfers) is fine; the outer one is reported.
module attributes {bp.num_devices = 2 : i64} {
func.func @too_many(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  // expected-error @+1 {{'scf.for' op runs its 2000 transfers 1000 times, more than the 1000000 bp-verify-p2p simulates (a transfer counts once for every device that runs it)}}
  scf.for %i = %c0 to %c1000 step %c1 {
    scf.for %j = %c0 to %c1000 step %c1 {
      %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
      bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    }
  }
  return
}
}

// -----

// Each loop is within the limit, but not both together.
module attributes {bp.num_devices = 2 : i64} {
func.func @too_many_together(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300000 = arith.constant 300000 : index
  scf.for %i = %c0 to %c300000 step %c1 {
    %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  // expected-error @+1 {{'scf.for' op runs its 2 transfers 300000 times, which with the 600000 transfers before it is more than the 1000000 bp-verify-p2p simulates}}
  scf.for %i = %c0 to %c300000 step %c1 {
    %r = bp.recv %b {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    bp.send %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  return
}
}
