//===- Passes.td - blockpipe passes ------------------------*- tablegen -*-===//
//
// Each pass is declared once, here; its description is its contract. The
// default pipeline (Pipeline.cpp) runs them in the order they appear.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TRANSFORMS_PASSES_TD
#define BLOCKPIPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def BPInferPipeTypes : Pass<"bp-infer-pipe-types", "::mlir::ModuleOp"> {
  let summary = "Give every tile popped from a pipe the type the other half "
                "of its group pushes";
  let description = [{
    A `bp.tpop` takes the shape and element type of the tiles pushed into
    its ring (same pipe id and direction) by the functions its group pairs
    its function with (`bp::getGroupPeers`). A frontend that cannot know
    them yet (both halves pop, and it builds one before the other) leaves
    the pop as `!bp.tile<*, space>`, and so what follows from it: vector
    ops and matmuls infer `*` results, moves and loops carry it. This pass
    gives each such pop the one type its ring's known pushes have
    (`bp::getPoppedTileType`), then the values that follow from it (results
    inferred again through InferTypeOpInterface, moves, loop-carried values,
    if results, casts), to a fixpoint: a push that follows from a pop becomes
    known in turn. A cast that a frontend joined an unknown tile with a
    typed one by is removed once both sides agree.

    Errors (at the pop, or the tile):
    - a pop whose type stays unknown: its group pushes nothing into its ring,
      pushes tiles of different types, or only tiles whose type comes from
      other pops;
    - a pop, typed by the frontend or here, whose type is not one its ring
      carries;
    - a cast that joins tiles of different shapes or element types.

    A module without pops and `*` tiles is left unchanged.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPFlattenTiles : Pass<"bp-flatten-tiles", "::mlir::ModuleOp"> {
  let summary = "Make tiles of more than 2 dimensions 2-D tiles of merged "
                "rows, and batched matmuls loops of matmuls";
  let description = [{
    The tile library and the targets' memories hold 1-D and 2-D tiles; a
    program may use tiles of up to 8 dims. In kernels, a tile
    `[d0, ..., M, K]` becomes `[d0 * ... * M, K]`: the same elements in the
    same row-major order; its dims before the last two are its batches.

    - Ops that treat rows alike keep their meaning and only change types:
      the op table's elementwise ops and row reductions (`[..., K]` to
      `[..., 1]`), their row (`[..., 1]`) and column (`[1, ..., K]`)
      broadcasts, `cmp`, `select`, `cast`, `full`, `move`, `reshape`,
      pipes, loops and ifs.
    - A load of an N-D window becomes a loop over the batches, each loading
      its `[M, K]` window and inserting it at its rows of a zero vec tile
      (an N-D load is a vec tile).
    - A store of an N-D tile becomes a loop over the batches, each
      extracting its rows and storing them into its window.
    - `bp.batch_matmul` becomes a loop over the result's batches, each
      loading both operands' windows of that batch (a broadcast operand's
      batch 0 in a dim of 1), multiplying them with `bp.matmul` and
      storing the product into its window. Its operands must be whole loads
      from GM (with moves), and its result stored whole right after it.
      Loops rather than repeated code: their tiles are allocated once.

    Errors, at the op: any other op with an N-D operand or result (a column
    reduction, a transpose, a window of a tile); an N-D tile with a valid
    shape, or loaded or stored in a cube memory; a batched matmul whose
    operands are not loads or whose result is not stored right away.

    A kernel without N-D tiles or batched matmuls is left as it is.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def BPInferMemorySpaces
    : Pass<"bp-infer-memory-spaces", "::mlir::ModuleOp"> {
  let summary = "Decide the memory space of every tile whose space is `?` "
                "from how it is used";
  let description = [{
    A frontend may leave the memory space of a `bp.load` or `bp.full` result
    undecided (`!bp.tile<16x64xf16, ?>`): the same load feeds a vector op in
    one program and a matmul in another. This pass decides every `?`.

    Tiles that must share a space form one class: a loop's init value,
    iteration argument, yielded value and result; an if's yielded values and
    result; the operand and result of an `unrealized_conversion_cast`
    between tile types that differ only in their space (how a frontend joins
    a `?` tile with a decided one); the left operand and result of a vector
    op. A class whose members include a decided tile (a matmul result
    carried by a loop, a vector op's result) takes that space. Otherwise its
    uses decide (`bp::getRequiredMemorySpace`: vec for vector ops, left /
    right / acc for matmul's operands; a move to left or right needs mat, a
    move to another space that space; a tpush in an aic function mat, in an
    aiv function vec; a store takes vec or acc and decides nothing):
    - a class holding a `bp.full`: acc when every use needs acc, else vec
      (in an aic function a full must be acc);
    - a class of loads: vec when unused or used only by vector ops; the one
      space when one cube space is needed; mat when several are (each use
      then gets its move: mat -> left, mat -> right).

    Then each use that needs another space than its class gets a `bp.move`
    right before it, a move to the space its operand already has is
    removed, the result types of ops that follow from their operands
    (InferTypeOpInterface) are inferred again, and the casts, now between
    equal types, are removed. A move that is not legal is left for the
    op's verifier to report.

    Errors (at the tile's location):
    - a load used by both vector and cube ops (load it once per unit, or
      give it a memory space);
    - a load that would be an acc tile: a matmul's accumulator, or joined
      with one (acc tiles come from matmul or full);
    - a full used both as a matmul accumulator and as a vector tile;
    - a full in an aic function that is not an accumulator;
    - a class whose decided members disagree.

    A module without `?` is left unchanged.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPSplitMatmul : Pass<"bp-split-matmul", "::mlir::ModuleOp"> {
  let summary = "Split matmuls larger than the Left, Right or Acc memories "
                "into K- and N-chunks";
  let description = [{
    pypto's automatic L0 tiling. A `bp.matmul` of `[M, K]` x `[K, N]` (or
    `[N, K]` transposed) whose Left operand, Right operand or Acc result
    does not fit its memory on the module's target becomes chunks that do:

    - K-chunks of `k` columns of the Left operand and `k` rows of the Right
      one, accumulated in Acc: an `scf.for` over K in steps of `k` whose
      body loads both chunks and adds their product (`bp.matmul ... acc`)
      to the running result, which starts as the matmul's accumulator or a
      zero `bp.full`;
    - when the `[M, N]` result does not fit Acc (or no K-chunk makes the
      Right operand fit), N-chunks of `n` columns: an `scf.for` over N in
      steps of `n`, each iteration computing its chunk over the K-chunks
      and storing it into its columns of the window (the loop carries the
      tensor the stores return). Only for a result whose one use is a whole
      `bp.store` in the same block, with no write to memory between the
      matmul and the store; the loop replaces the store.

    Loops rather than repeated code: each loop's tiles are allocated once,
    which on `cuda` is what a thread block's shared memory holds.

    `k` is the largest divisor of K, and `n` the largest divisor of N (N
    itself when it fits), that make every chunk fit. The chunks are loaded
    from GM like the operands: the pass applies where each operand is a
    whole load (no valid shape) into Left or Right, or into Mat and moved
    there. The whole loads and moves are removed unless something else
    uses them. The split is visible in the IR: the chunk tiles' shapes and
    the loops' steps (`k`, `n`).

    A matmul that fits, or that no split makes fit, or whose operands are
    not loads, is left as it is: bp-verify-capacity reports a tile that
    does not fit.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def BPExpandMixedKernel : Pass<"bp-expand-mixed-kernel", "::mlir::ModuleOp"> {
  let summary = "Split incore kernels that mix cube and vector work into an "
                "aic, an aiv and a group function";
  let description = [{
    An `incore` function `@k` that holds both cube ops (matmul, loads into
    mat/left/right, moves into cube memories, stores from acc) and vector ops
    is replaced by three functions:

    - `@k_aic` (`aic`): the cube ops, in their original order;
    - `@k_aiv` (`aiv`): the vector ops, in their original order;
    - `@k` (`group`): the original name, signature and argument attributes,
      calling `@k_aic` then `@k_aiv`, so launch sites stay unchanged.

    Pure-cube and pure-vector incore kernels are left alone.

    Ops that belong to neither side (constants, index arithmetic and
    comparisons, `get_block_idx`, `dim`, `scf.for`, `scf.if`) are duplicated
    into both halves; a loop or an if holding ops of both sides is duplicated
    with each copy keeping its side's ops (both copies of an if branch on the
    same condition, computed in each half), and a loop-carried tile or a tile
    result of an if is kept only by the half its memory space belongs to
    (vec: AIV; mat/left/right/acc: AIC).

    Crossings. A tile of one side used by an op of the other side crosses
    through pipe 0 of the group: a cube tile used by the vector side is
    pushed `c2v` right after its definition in `@k_aic` and popped at the same
    program point in `@k_aiv` as a `vec` tile of the same shape and element
    type; a vector tile used by the cube side goes `v2c` and is popped as a
    `mat` tile. A `bp.move` acc -> vec (or vec -> mat) at a crossing becomes
    the pop itself. Because both halves keep the original order, the pushes
    and pops of each ring happen in the same order on both sides (a crossing
    inside a loop is pushed and popped once per iteration, one inside an if
    branch only when that branch runs). The popping side frees each slot
    (`tfree`) after the last use of the popped tile, also through the if and
    loop results it is yielded into, in pop order, since a `tfree` releases
    the oldest popped slot.

    The pipe. Both halves start with the same
    `bp.initialize_pipe id(0) dir_mask(M) slot_size(S)`: one pipe per group,
    `M` the union of the directions used (1 c2v, 2 v2c, 3 both), `S` the
    largest crossing tile in bytes. slot_num is the kernel's `bp.slot_num`
    (`pl.cross_core_slot`) or else the target's default (8, or 4 for both
    directions on cpu-sim), unless a half holds more popped tiles at once
    (popped, not yet freed, counting the one being popped): then it is that
    number, since the pushing half needs a free slot for every tile the
    popping half holds or both would wait forever.

    Parameters and results. Each half takes the parameters it uses, in their
    original order and with their attributes. A half returns every Out/InOut
    parameter it keeps, in parameter order; the group returns, for each
    original return value, the result of the half whose store produced it.

    Errors (at the op's location):
    - a half holds more tiles at once than the target's pipe.max_slot_num
      (at the op whose result is the last of them);
    - a tile popped inside a loop or an if branch is yielded out of it (its
      slot would outlive the region that popped it), or a popped tile is held
      across a nested loop or if that pops from the same ring (the FIFO
      `tfree` could not release it in order);
    - an op with regions other than `scf.for` and `scf.if` holds ops of both
      sides;
    - the kernel calls other functions;
    - a return value is not the value of a parameter (the half producing it is
      unknown).
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPSplitVectorKernel : Pass<"bp-split-vector-kernel", "::mlir::ModuleOp"> {
  let summary = "Share the vector half of a split kernel between both AIV "
                "subblocks";
  let description = [{
    A core group has two AIV subblocks. An `aiv` function (a group's vector
    half, made by bp-expand-mixed-kernel, or a user's) whose `bp.split` is
    `up_down` (`left_right`) is written for whole tiles and runs on both
    subblocks, each on its half of the rows (columns) of every vector tile:

    - every vec tile with more than one row (column) gets half of them (a
      tile of one row under up_down, or one column under left_right, stays
      whole on both subblocks: a broadcast operand such as a bias row);
    - every load and store of a halved tile moves its window by
      `get_subblock_idx() * half` along the split dimension, so subblock 0
      takes the top (left) half and subblock 1 the bottom (right) half;
    - pops and pushes move the halves: the pipe is split (codegen
      initializes it with `bp_pipe_init_split`), the AIC pushing and popping
      whole tiles whose halves go to (come from) the two subblocks.

    - a reshape keeps each subblock's run of elements: its result is
      halved by rows, or by columns when it has one row (row sums reshaped
      to a row), and ops on it keep that axis.

    Launches of a split kernel run 2 AIV subblocks per block (codegen).

    A kernel with `pl.split_aiv` regions (ops marked `bp.lane`) is written
    per lane instead: its ops stay as they are, and each pop whose tile a
    region's `pl.aiv_shard` (a `bp.extract` marked `bp.aiv_shard`) takes
    half of arrives as that half, the extract dropped. Errors there: vector
    work outside the regions, a pop the regions use without a shard, a push
    from the vector half (pypto's `pl.aic_gather`).

    Errors (at the op): a vec tile whose split extent is odd (other than 1)
    or that is not 2-D; a transpose; a row reduction under left_right (each
    subblock would see half of every row); a store of a tile of one split
    row (column), which both subblocks hold whole; a tile parameter.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect", "::mlir::arith::ArithDialect"];
}

def BPInjectGMPipeBuffer : Pass<"bp-inject-gm-pipe-buffer", "::mlir::ModuleOp"> {
  let summary = "Give every function that uses a GM pipe its per-block pipe "
                "buffer";
  let description = [{
    Every non-orchestration function that initializes a pipe, or calls one
    that needs a buffer, gets a trailing parameter
    `!bp.tensor<BYTESxi8> {bp.gm_pipe_buffer}` (named `__gm_pipe_buffer` in
    generated code) and the attribute `bp.pipe_buffer_bytes = BYTES`. `BYTES`
    is the per-block footprint: the sum over the distinct pipes of
    `rings x slots x slot_size` (`blockpipe::pipeFootprintBytes`). Scaling by
    `core_num` is codegen's job: core_num belongs to the launch.

    Distinct pipes. Pipe ids name pipes of one core group: the same id
    initialized in a function and in its callees, or in the aic and the aiv
    half of a group, is one pipe with one region, and every initialization of
    it must agree on dir_mask, slot_size and resolved slot_num.

    Layout. For each launched function (the root), its pipes are laid out
    back to back in increasing id order; every `bp.initialize_pipe` under the
    root gets `buffer(%__gm_pipe_buffer)` and `offset(<its pipe's offset>)`.
    Callers pass their buffer parameter to their callees unchanged (a group
    passes it to both halves).

    Orchestration. The parameter stops at orchestration functions: right
    before each `bp.launch` of a function that needs a buffer, the pass
    inserts `bp.tensor_create pipe_buffer : !bp.tensor<BYTESxi8>` and appends
    it to the launch's arguments; two launches get two buffers.

    Running the pass again changes nothing.

    Errors (at the op's location, with a note at the other op):
    - two initializations of one pipe disagree on its shape;
    - a function is reached from two launched functions that lay its pipes
      out differently;
    - a kernel or group calls itself, directly or through other functions;
    - an orchestration function reaches a pipe user through `func.call`
      rather than `bp.launch`.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPNormalizeReturnOrder
    : Pass<"bp-normalize-return-order", "::mlir::ModuleOp"> {
  let summary = "Make return i of every kernel and group its i-th Out/InOut "
                "parameter";
  let description = [{
    For every incore, aic, aiv and group function, each returned value is
    traced back to the parameter it is the value of: through `bp.store`
    (which returns its destination), `scf.for` results (through the init
    value of the iteration argument) and calls (through the callee's own
    mapping). Results are then permuted so that return i is the i-th
    parameter marked `bp.dir = #bp<dir out>` or `#bp<dir inout>`; result
    attributes move with their results, and every `func.call` and `bp.launch`
    of the function is rebuilt with the new result order. Callees are
    normalized before their callers. A function already in order is not
    touched.

    Errors (at the offending `return`, with a note at the other value):
    - a returned value is not the value of any parameter, or of a parameter
      that is not Out/InOut;
    - two returned values are the value of the same parameter;
    - an Out/InOut parameter is not returned.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPPipelineStages : Pass<"bp-pipeline-stages", "::mlir::ModuleOp"> {
  let summary = "Join a pipeline's stages with send/recv between their "
                "devices";
  let description = [{
    A `pipeline` function (`bp.microbatches = m`, `bp.schedule` "gpipe" or
    "interleaved") runs `bp.stage` ops: device-placed orchestrations, each
    run on every microbatch. The pass checks that they form a chain:

    - each stage writes exactly one Out tensor, its activation: a buffer
      created in the pipeline (`bp.tensor_create`), or for the last stage
      the pipeline's Out parameter, split into microbatches when m > 1;
    - each stage after the first reads the activation of the stage just
      before it, once; its other arguments are the pipeline's parameters,
      whole (resident on the stage's device, uploaded once per call) or
      split (m times the parameter's leading dimension: microbatch k reads
      the k-th slice) — `bp.stage` verifies the types, and a stage boundary
      whose types differ is an error there;
    - a stage runs once; the pipeline returns the last stage's output;
    - every device of the mesh (`bp.num_devices`) holds a stage, and the
      interleaved schedule has a device holding several stages.

    Then, for each boundary s (stage s to s + 1) between different devices,
    it inserts after stage s a `bp.send` of its activation and before stage
    s + 1 a `bp.recv` into a new buffer, both with
    `source_target_pairs = [[device(s), device(s + 1)]]` and channel
    base + s, where base is above every channel the module used; the
    function gets `bp.stage_channel = base`. bp-verify-p2p then checks the
    transfers like any other. The runtime's pipeline executor runs the
    stages by the schedule, boundary s on channel base + s.
  }];
}

def BPDecomposeCollectivePermute
    : Pass<"bp-decompose-collective-permute", "::mlir::ModuleOp"> {
  let summary = "Lower collective_permute to recv/send pairs, deadlock-free "
                "on cycles";
  let description = [{
    `%r = bp.collective_permute %x {pairs, channel}` becomes, in order:

    1. `%buf = bp.tensor_create` of the result type (dynamic sizes from
       `bp.dim` of `%x`): the result on devices that are no target;
    2. `bp.local_copy %x, %buf devices([i, ...])` for the identity pairs
       `[i, i]` (a device never sends to itself);
    3. one or two phases, each `bp.recv` into the buffer then `bp.send %x`,
       both carrying the phase's pairs and the permute's channel.

    With a destination, `bp.collective_permute %x into %dest`, no tensor is
    created: the destination is the buffer, and the result is written into
    it in place. Since a destination keeps what it held, step 1 becomes
    `bp.local_zero %dest devices([...])` for the devices of
    [0, bp.num_devices) that are no target (StableHLO gives them zeros),
    left out when every device is a target.

    Phases. A device's recv blocks until its source has sent; `send` does not
    block. Recv-before-send over a cycle of pairs (e.g. the ring shift
    `[[0,1],[1,2],[2,3],[3,0]]`) would make every device wait for a device
    that waits for it. The non-identity pairs therefore form chains and
    cycles (sources and targets are unique); chain pairs and, along each
    cycle starting at its smallest device, the pairs at even positions go to
    phase 0, the pairs at odd positions of a cycle to phase 1. Each phase is
    acyclic, so its waits end; phase 1 starts after phase 0 on every device.
    Without a cycle there is a single phase. Every device still receives in
    exactly one phase, so the result is the buffer after the last phase.

    Errors: a permute with a destination in a module without
    `bp.num_devices` (the devices that get zeros are unknown). The op's
    verifier already asks for `bp.num_devices` whenever it has pairs, so only
    IR that skipped verification gets here.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPCheckOutputCoverage
    : Pass<"bp-check-output-coverage", "::mlir::ModuleOp"> {
  let summary = "Warn about Out tensors that launches write only in part";
  let description = [{
    For every `bp.launch` with a constant `core_num`, evaluates the
    launched kernel's index arithmetic once per block (`block_idx`,
    `block_num`, constants, constant scalar arguments, loops with bounds so
    known, `if`s with conditions so known, calls) and collects the windows
    its `bp.store`s write into each `Out` parameter of static shape. Launches
    that write the same tensor one after another (the result of one passed
    as the next one's Out) are taken together. When the windows leave part
    of the tensor unwritten, a warning at the launch names the tensor and
    the rows or columns left (with a note at each earlier launch of the
    chain).

    A launch whose windows depend on anything else (a scalar computed at run
    time, a dynamic dim, `get_subblock_idx`, a pipe) is not decided here; the
    runtime's sanitizer (`BLOCKPIPE_SANITIZE=1`) reports those at run time.

    An orchestration's `Out` parameter whose chain of launches writes every
    element, where nothing reads the tensor before the chain ends (no
    launch takes it as In or InOut, no kernel of the chain loads from it or
    calls a function), gets the unit attribute `bp.written_whole`: its old
    contents can never be observed, so callers need not upload them
    (kernel_config.json's `written_whole`).
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPVerifyP2P : Pass<"bp-verify-p2p", "::mlir::ModuleOp"> {
  let summary = "Check that every send has its recv and that no device "
                "waits for itself";
  let description = [{
    Device-to-device `bp.send` and `bp.recv` ops (host transfers excluded)
    are matched over the whole module by channel handle and
    `source_target_pairs`: the k-th send with a given (channel, pairs), in
    module order, matches the k-th recv with the same key. A matched pair
    must move the same element type and compatible shapes (a dynamic
    dimension matches any size).

    Loops. A transfer inside an `scf.for` whose lower bound, upper bound and
    step are constants (`arith.constant`) runs once per iteration: the body's
    transfers are repeated trip-count times, nested loops multiplying, both
    in the k-th send / k-th recv matching and in each device's sequence
    below. Any other enclosing op (an `scf.for` with a bound or step computed
    at run time, an `scf.if`, an `scf.while`, ...) leaves the number of
    transfers unknown, and the transfer is an error.

    Deadlock check. Each device runs, in module order, the transfers of the
    orchestration functions placed on it (`bp.device`), or of those without a
    placement, in which it takes part (a source of a send, a target of a
    recv). A send never blocks; a recv waits until its matched send ran on
    the source device. The pass simulates this; if devices are left waiting,
    the waits form a cycle, which is reported. The simulation runs at most
    1,000,000 transfers (one per device that runs it), loops unrolled.
    `bp.collective_permute` (not yet decomposed) is not checked.

    Errors (at the op's location, with a note at the other op):
    - a send without a matching recv, or a recv without a matching send
      (a note points at a transfer on the same channel with other pairs;
      where the counts differ, both are given);
    - a matched send and recv that move different tensor types;
    - a wait cycle between devices (a note for every recv in the cycle);
    - a transfer inside a loop whose trip count is not known at compile
      time, or under a condition (a note at the loop or the condition);
    - a loop whose iterations would take the simulation past 1,000,000
      transfers (at the loop).

    A transfer inside a loop is reported once, not once per iteration.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPVerifyCapacity : Pass<"bp-verify-capacity", "::mlir::ModuleOp"> {
  let summary = "Check that every tile fits its memory space on the target";
  let description = [{
    Every tile in the module (an op's result or a block argument) must fit
    the per-core local memory of its space (`vec`, `mat`, `left`, `right`,
    `acc`) on the module's target (`#bp.target`, set by bp-register-target;
    the bundled `cpu-sim` spec when the module has none). A tile is its
    shape times its element's bytes; a tile larger than its memory cannot be
    placed there on any schedule. Then the tiles live at once (by MLIR's
    liveness analysis, at every op that makes a tile, counting the blocks
    around it) must fit each memory together. A tile an `scf.for` carries is
    one variable with its start value (when the loop is that value's one
    use), the value its body yields (when the yield is that value's one
    use) and the loop's result, and counts once.

    Errors (at the op that makes the tile, or at the op owning the block
    argument): the tile's type, its bytes, the memory's bytes and the
    target's name; for tiles live at once, at the first op where a memory
    overflows, every tile live there with its name, line and bytes.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPPlanKernels : Pass<"bp-plan-kernels", "::mlir::ModuleOp"> {
  let summary = "Decide how kernel bodies hold their tiles and what they "
                "check at run time";
  let description = [{
    Makes the decisions codegen used to make while writing C++, and records
    each as an attribute codegen only reads (KernelPlan.h); the module gets
    `bp.planned`. Running it again decides afresh.

    - `bp.launch_blocks = N` on a kernel every launch of which runs the same
      constant N blocks (a group half only its group calls: its group's N).
      Its entry refuses any other count, and windows are proven in bounds
      for N.
    - `bp.checked = array<i64: ...>` on an op: the operands checked at run
      time, each one neither a constant nor proven in range by MLIR's
      integer range analysis (block_idx in [0, N)): a load's or store's
      window offsets (always, along a dynamic dim or a valid size known only
      at run time) and valid sizes, a read's indices, a tile window's
      offsets, a fillpad's valid sizes, an integer op of the op table with a
      check (its second operand: a divisor, a shift amount), an integer
      division's divisor, a loop's step, a launch's core_num. Dead ops (no
      effect but reads, results unused) are left out, as codegen leaves
      them out.
    - `bp.placement` where GM is host memory (every driver but cuda):
      `in_place` on a full 2-D load whose only use reads it where it is (a
      matmul's left operand, or a binary elementwise op, with nothing
      between that may write memory), on a move into a matmul operand, and
      on a pop whose slot holds the whole tile and is read before its tfree;
      `panels` on a matmul's right operand loaded into the micro-kernel's
      layout, `shared_panels` when the tensor is an input the launch only
      reads (packed once per launch); `into_store` on a binary elementwise
      op writing straight into the window of its only use, a full store.
    - `bp.may_fail_midway` on a kernel whose launch can fail after its
      blocks started writing: it checks something at run time, synchronizes
      all blocks, or waits on a pipe (a group: a half that checks, or uses a
      pipe whose pushes and pops bp-expand-mixed-kernel did not match, or
      matched but steered by scalars read from GM). A call of an
      orchestration that only launches kernels that cannot may write its
      outputs in place.
  }];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

def BPRegisterTarget : Pass<"bp-register-target", "::mlir::ModuleOp"> {
  let summary = "Attach the target's device spec to the module";
  let description = [{
    Sets the module's `bp.target` to the device spec the program is compiled
    for: a bundled spec by name (`target=cpu-sim`, `target=cuda`) or a JSON
    file (`spec=FILE`, whose `driver` field names the driver that runs it).
    With neither option a module keeps the target it has, and one without
    gets `cpu-sim`. Every later pass and codegen read sizes from this
    attribute: local memories (bp-verify-capacity), the pipe slot defaults
    and limit (bp-inject-gm-pipe-buffer, the `initialize_pipe` verifier),
    the stack a kernel's tiles may take (codegen). The manifest records it
    and the runtime refuses to run the program on a device of another spec.

    Errors: both options given; an unknown target name (naming the bundled
    ones); a spec file that cannot be read or is invalid (naming the file
    and the field).
  }];
  let options = [
    Option<"targetName", "target", "std::string", /*default=*/"\"\"",
           "A bundled device spec: cpu-sim or cuda">,
    Option<"specPath", "spec", "std::string", /*default=*/"\"\"",
           "A device spec JSON file">
  ];
  let dependentDialects = ["::mlir::bp::BPDialect"];
}

#endif // BLOCKPIPE_TRANSFORMS_PASSES_TD
