/* Dot products: float (scalar) and int8 x int8 -> int32 (vectorised with widening ops). */
float dot_f32(int n, const float *a, const float *b) {
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

int dot_i8(int n, const signed char *a, const signed char *b) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}
