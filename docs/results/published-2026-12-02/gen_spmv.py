# The spmv script's data (Kernel Tuner's examples/cuda/spmv.py), smaller (32 Ki rows, density
# 0.001), saved as .npy files, and the expected y = A x computed in float64.
import random, struct
def save(path, descr, fmt, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    header += ' ' * (64 - (10 + len(header) + 1) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%d%s' % (len(values), fmt), *values))
random.seed(1)
nrows = ncols = 32 * 1024
nnz = int(nrows * ncols * 0.001)
rows = [0] + sorted(int(random.random() * nnz) for _ in range(nrows - 1)) + [nnz]
cols = [int(random.random() * ncols) for _ in range(nnz)]
f32 = lambda v: struct.unpack('<f', struct.pack('<f', v))[0]
vals = [f32(random.gauss(0, 1)) for _ in range(nnz)]
x = [f32(random.gauss(0, 1)) for _ in range(ncols)]
y = [sum(vals[j] * x[cols[j]] for j in range(rows[i], rows[i + 1])) for i in range(nrows)]
save('rows.npy', '<i4', 'i', rows); save('cols.npy', '<i4', 'i', cols)
save('vals.npy', '<f4', 'f', vals); save('x.npy', '<f4', 'f', x); save('y.npy', '<f4', 'f', y)
print(nrows, nnz)
