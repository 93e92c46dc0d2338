from wave import kernel, f32, u32, thread_id

@kernel
def relu_scale(x: f32[:], out: f32[:], n: u32):
    i = thread_id()
    if i < n:
        v = x[i]
        if v > 2.0:
            out[i] = v * 3.0
        else:
            out[i] = 0.0 - v
