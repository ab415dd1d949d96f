/* ReLU on int8 and int32 tensors, and a float ReLU. */
void relu_i8(int n, signed char *x) {
    for (int i = 0; i < n; i++)
        x[i] = x[i] > 0 ? x[i] : 0;
}

void relu_i32(int n, const int *x, int *y) {
    for (int i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}

void relu_f32(int n, float *x) {
    for (int i = 0; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
