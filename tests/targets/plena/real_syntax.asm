; PLENA assembly in the syntax of the real assembler (AICrossSim PLENA_Compiler, Feb 2026,
; assembler/parser.py): one instruction per line, operands split at commas, a trailing ';' or
; '//' comment, trailing blanks, the placeholder first operand of the matrix ops written as a gp
; register or as 0, every masked vector op with its rmask written out. It runs without a trap.
// setup
S_ADDI_INT gp1, gp0, 64
S_ADDI_INT gp2, gp0, 128;
S_LUI_INT gp3, 1            // gp3 = 4096: one tile's element count
S_ADDI_INT gp4, gp0, 256 
S_LUI_INT gp5, 4            ; gp5 = 16384
S_ADDI_INT gp6, gp0, 512
S_ADDI_INT gp7, gp0, 5      ; V_MASK: segments 0 and 2
S_LUI_INT gp9, 256          ; gp9 = 1 MiB: the store's HBM base
C_SET_ADDR_REG a0, gp0, gp0
C_SET_ADDR_REG a1, gp0, gp9
C_SET_SCALE_REG gp3
C_SET_STRIDE_REG gp2
C_SET_V_MASK_REG gp7
// HBM to SRAM
H_PREFETCH_M gp0, gp0, a0, 0, 0
H_PREFETCH_M gp3, gp1, a0, 1, 1
H_PREFETCH_V gp0, gp0, a0, 0, 0
H_PREFETCH_V gp4, gp1, a0, 1, 1
// matrix machine: every form, placeholders spelled both ways
M_MM gp0, gp0, gp0
M_MM 0, gp0, gp0
M_MM_WO gp6, gp0, 0
M_TMM gp0, gp0, gp0
M_TMM 0, gp3, gp0
M_MM_WO gp6, gp0, 0
M_MV gp0, gp0, gp0
M_MV 0, gp0, gp0
M_MV_WO gp6, 0
M_TMV gp0, gp0, gp0
M_TMV 0, gp3, gp0
M_MV_WO gp6, 0
M_BMM gp0, gp0, gp0
M_BMM 0, gp3, gp0
M_BMM_WO gp5, 0
M_BTMM gp0, gp0, gp0
M_BTMM 0, gp3, gp0
M_BMM_WO gp5, 0
M_BMV gp0, gp0, gp0
M_BMV gp3, gp0, gp1
M_BMV_WO gp6, 0
M_BTMV gp0, gp0, gp0
M_BTMV gp3, gp0, gp1
M_BMV_WO gp6, 0
// vector machine: every form, unmasked and masked
V_ADD_VV gp4, gp0, gp1, 0
V_ADD_VV gp4, gp4, gp1, 1
V_ADD_VF gp4, gp4, f1, 0
V_ADD_VF gp4, gp4, f1, 1
V_SUB_VV gp4, gp4, gp1, 0
V_SUB_VV gp4, gp4, gp1, 1
V_SUB_VF gp4, gp4, f1, 0, 0
V_SUB_VF gp4, gp4, f1, 1, 1
V_MUL_VV gp4, gp4, gp1, 0
V_MUL_VV gp4, gp4, gp1, 1
V_MUL_VF gp4, gp4, f1, 0
V_MUL_VF gp4, gp4, f1, 1
V_EXP_V gp4, gp4, 0
V_RECI_V gp4, gp4, 0
V_RED_SUM f2, gp4
V_RED_MAX f3, gp4, 0
// scalar FP and integer
S_LD_FP f1, gp0, 1
S_ADD_FP f4, f1, f1
S_SUB_FP f5, f4, f1
S_MAX_FP f6, f5, f4
S_MUL_FP f7, f6, f6
S_EXP_FP f5, f1
S_RECI_FP f6, f4
S_SQRT_FP f7, f4
S_ST_FP f7, gp0, 8
S_MAP_V_FP gp6, gp0, 0
S_ADD_INT gp10, gp1, gp2
S_SUB_INT gp11, gp10, gp1
S_MUL_INT gp12, gp11, gp1
S_ST_INT gp12, gp0, 3
S_LD_INT gp13, gp0, 3
// a hardware loop storing back to HBM
S_ADDI_INT gp14, gp0, 0
C_LOOP_START gp15, 2
H_STORE_V gp4, gp14, a1, 0, 0
H_STORE_V gp4, gp14, a1, 1, 1
S_ADDI_INT gp14, gp14, 256
C_LOOP_END gp15
