import os

# Every device these tests create checks each pipe access against the block's
# own slice of the pipe buffer; a violation fails the launch.
os.environ.setdefault("BLOCKPIPE_SANITIZE", "1")
