/*
 * einsum: parses the subscripts into labelled operands and contracts them left to right with
 * wgt_contract_pair (contract.c), keeping at each step the labels that the output or a later
 * operand still needs. A letter repeated within one operand is its diagonal: a strided view
 * whose stride is the sum of the repeated dimensions' strides, so nothing is copied. The
 * dimensions of "..." get labels of their own, right-aligned across operands so that they
 * broadcast as NumPy's do.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"

static const char fn[] = "wgt_einsum";

enum { ELLIPSIS_LABEL = 256 }; /* + position among the broadcast "..." dimensions */

typedef struct term {
    int nletters;
    int letters[WGT_MAX_DIMS * 2]; /* in order; -1 where "..." stands */
    int has_ellipsis;
} term;

/* Parses one term, s[0..len), at position pos of the whole string. */
static wgt_status parse_term(const char *all, int pos, int len, const char *what, term *t) {
    memset(t, 0, sizeof *t);
    for (int i = 0; i < len; i++) {
        char c = all[pos + i];
        if (c == ' ') continue;
        if (c == '.') {
            if (i + 2 >= len || all[pos + i + 1] != '.' || all[pos + i + 2] != '.' || t->has_ellipsis)
                return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: '.' at position %d of \"%s\" is not part of one '...' in %s",
                                 fn, pos + i, all, what);
            t->has_ellipsis = 1;
            if (t->nletters == WGT_MAX_DIMS * 2) goto too_many;
            t->letters[t->nletters++] = -1;
            i += 2;
            continue;
        }
        if (!isalpha((unsigned char)c) || (unsigned char)c > 127)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: subscript '%c' at position %d of \"%s\" is not a letter (a-z, A-Z) or '...'",
                             fn, c, pos + i, all);
        if (t->nletters == WGT_MAX_DIMS * 2) goto too_many;
        t->letters[t->nletters++] = c;
    }
    return WGT_OK;
too_many:
    return wgt_error(WGT_ERR_SHAPE, "%s: %s of \"%s\" names more than %d dimensions", fn, what, all, WGT_MAX_DIMS * 2);
}

/* The operand with its "..." dimensions labelled and repeated letters made diagonals. */
static wgt_status label_operand(const char *subs, int i, const term *t, wgt_tensor *x, int nell, int64_t *letter_len,
                                int *letter_from, wgt_labelled *out) {
    int named = t->nletters - t->has_ellipsis, e = x->ndim - named;
    char sx[256];
    wgt_format_shape(sx, sizeof sx, x->ndim, x->shape);
    if (e < 0 || (!t->has_ellipsis && e != 0))
        return wgt_error(WGT_ERR_SHAPE, "%s: operand %d %s has %d dimensions but its subscripts in \"%s\" name %d%s", fn, i,
                         sx, x->ndim, subs, named, t->has_ellipsis ? " besides '...'" : "");
    int labels[WGT_MAX_DIMS], d = 0;
    for (int k = 0; k < t->nletters; k++) {
        if (t->letters[k] >= 0) {
            labels[d++] = t->letters[k];
            continue;
        }
        for (int j = 0; j < e; j++) labels[d++] = ELLIPSIS_LABEL + nell - e + j;
    }
    /* One dimension per distinct label; a repeat folds into the first as a diagonal. */
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    int nu = 0;
    out->t = NULL;
    for (d = 0; d < x->ndim; d++) {
        int l = labels[d], u = 0;
        while (u < nu && out->labels[u] != l) u++;
        if (u < nu) {
            if (shape[u] != x->shape[d])
                return wgt_error(WGT_ERR_SHAPE, "%s: subscript '%c' repeats in operand %d %s with lengths %lld and %lld", fn,
                                 l, i, sx, (long long)shape[u], (long long)x->shape[d]);
            strides[u] += x->strides[d];
            continue;
        }
        out->labels[nu] = l;
        shape[nu] = x->shape[d];
        strides[nu++] = x->strides[d];
        if (l >= ELLIPSIS_LABEL) continue;
        if (letter_from[l] >= 0 && letter_len[l] != x->shape[d])
            return wgt_error(WGT_ERR_SHAPE, "%s: subscript '%c' has length %lld in operand %d but %lld in operand %d", fn, l,
                             (long long)letter_len[l], letter_from[l], (long long)x->shape[d], i);
        letter_len[l] = x->shape[d];
        letter_from[l] = i;
    }
    out->t = nu == x->ndim ? wgt_retain(x) : wgt_as_strided(x, nu, shape, strides, x->offset);
    return out->t ? WGT_OK : wgt_last_status();
}

/* The operands labelled (lab[i], each a reference or a diagonal view) and the output's labels
 * (out, nout) of the subscripts; *diagonal: some operand repeats a letter. */
static wgt_status parse_all(const char *subscripts, int count, wgt_tensor *const *operands, wgt_labelled *lab, int *out,
                            int *nout, int *diagonal) {
    /* Split "in,in,...->out" into terms. */
    int len = (int)strlen(subscripts);
    const char *arrow = strstr(subscripts, "->");
    int in_len = arrow ? (int)(arrow - subscripts) : len;
    if (arrow && strstr(arrow + 2, "->"))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: \"%s\" has more than one '->'", fn, subscripts);
    int nterms = 1;
    for (int i = 0; i < in_len; i++) nterms += subscripts[i] == ',';
    if (nterms != count)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: \"%s\" names %d operand%s but %d were given", fn, subscripts, nterms,
                         nterms == 1 ? "" : "s", count);
    wgt_status st = WGT_OK;
    term *terms = calloc((size_t)count, sizeof *terms);
    if (!terms) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %d operands", fn, count);
    for (int i = 0, start = 0; i < count; i++) {
        int end = start;
        while (end < in_len && subscripts[end] != ',') end++;
        char what[32];
        snprintf(what, sizeof what, "operand %d", i);
        if (parse_term(subscripts, start, end - start, what, &terms[i]) != WGT_OK) goto fail;
        start = end + 1;
    }
    term out_term;
    if (arrow && parse_term(subscripts, in_len + 2, len - in_len - 2, "the output", &out_term) != WGT_OK) goto fail;

    /* The broadcast "..." dimensions: as many as the operand with most, lengths broadcast. */
    int nell = 0, ell_n[WGT_MAX_DIMS] = {0};
    int64_t ell_len[WGT_MAX_DIMS];
    for (int i = 0; i < count; i++) {
        int e = operands[i]->ndim - (terms[i].nletters - terms[i].has_ellipsis);
        if (terms[i].has_ellipsis && e > nell) nell = e;
    }
    for (int j = 0; j < nell; j++) ell_len[j] = 1;
    for (int i = 0; i < count; i++) {
        int e = operands[i]->ndim - (terms[i].nletters - terms[i].has_ellipsis), at = 0;
        if (!terms[i].has_ellipsis || e <= 0) continue;
        while (terms[i].letters[at] >= 0) at++; /* the "..." begins at dimension at */
        for (int j = 0; j < e; j++) {
            int64_t n = operands[i]->shape[at + j];
            int p = nell - e + j;
            if (n != 1 && ell_len[p] != 1 && n != ell_len[p]) {
                wgt_error(WGT_ERR_SHAPE, "%s: the '...' dimensions of operand %d do not broadcast with those of operand %d (%lld vs %lld)",
                          fn, i, ell_n[p], (long long)n, (long long)ell_len[p]);
                goto fail;
            }
            if (n != 1) ell_len[p] = n, ell_n[p] = i;
        }
    }

    int64_t letter_len[128];
    int letter_from[128], uses[128] = {0};
    for (int l = 0; l < 128; l++) letter_from[l] = -1;
    for (int i = 0; i < count; i++)
        if (label_operand(subscripts, i, &terms[i], operands[i], nell, letter_len, letter_from, &lab[i]) != WGT_OK) goto fail;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < terms[i].nletters; k++)
            if (terms[i].letters[k] >= 0) uses[terms[i].letters[k]]++;

    /* The output's labels: given, or "..." then the letters used once, alphabetically. */
    int out_labels[WGT_MAX_DIMS * 3], out_nd = 0;
    unsigned char in_out[WGT_LABELS] = {0};
    *diagonal = 0;
    for (int i = 0; i < count; i++) *diagonal |= lab[i].t->ndim != operands[i]->ndim;
    if (arrow) {
        for (int k = 0; k < out_term.nletters; k++) {
            int l = out_term.letters[k];
            if (l < 0) {
                for (int j = 0; j < nell; j++) out_labels[out_nd++] = ELLIPSIS_LABEL + j;
                continue;
            }
            if (letter_from[l] < 0 || in_out[l]) {
                wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: output subscript '%c' of \"%s\" %s", fn, l, subscripts,
                          in_out[l] ? "repeats" : "is in no operand");
                goto fail;
            }
            in_out[l] = 1;
            out_labels[out_nd++] = l;
        }
    } else {
        for (int j = 0; j < nell; j++) out_labels[out_nd++] = ELLIPSIS_LABEL + j;
        for (int l = 0; l < 128; l++)
            if (uses[l] == 1) out_labels[out_nd++] = l;
    }
    if (out_nd > WGT_MAX_DIMS) {
        wgt_error(WGT_ERR_SHAPE, "%s: the output of \"%s\" would have %d dimensions, more than %d", fn, subscripts, out_nd,
                  WGT_MAX_DIMS);
        goto fail;
    }
    *nout = out_nd;
    memcpy(out, out_labels, sizeof(int) * (size_t)out_nd);

    free(terms);
    return WGT_OK;
fail:
    st = wgt_last_status();
    free(terms);
    return st;
}

wgt_tensor *wgt_einsum(const char *subscripts, int count, wgt_tensor *const *operands) {
    if (!subscripts || !operands || count < 1)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: needs subscripts and at least one operand (subscripts %s, %d operands)",
                         fn, subscripts ? "given" : "NULL", operands ? count : 0),
               NULL;
    if (wgt_contract_check(fn, count, operands) != WGT_OK) return NULL;
    wgt_labelled *lab = calloc((size_t)count, sizeof *lab);
    wgt_tensor **wide = calloc((size_t)count, sizeof *wide), *result = NULL;
    int out_labels[WGT_MAX_DIMS], out_nd, diagonal, widened = 0;
    wgt_dtype result_type;
    if (!lab || !wide) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %d operands", fn, count);
        goto done;
    }
    /* Integer operands computed in one backend type (contract.c), the result cast back. */
    if (wgt_contract_widen(count, operands, wide, &result_type) != WGT_OK) goto done;
    widened = 1;
    if (parse_all(subscripts, count, wide, lab, out_labels, &out_nd, &diagonal) != WGT_OK) goto done;
    unsigned char in_out[WGT_LABELS] = {0};
    for (int k = 0; k < out_nd; k++) in_out[out_labels[k]] = 1;

    /* Left to right: after operand i, keep what the output or a later operand names. */
    wgt_labelled acc = lab[0];
    lab[0].t = NULL;
    if (count == 1) acc = wgt_contract_sum_out(acc, in_out);
    for (int i = 1; i < count && acc.t; i++) {
        unsigned char keep[WGT_LABELS];
        memcpy(keep, in_out, sizeof keep);
        for (int j = i + 1; j < count; j++)
            for (int d = 0; d < lab[j].t->ndim; d++) keep[lab[j].labels[d]] = 1;
        acc = wgt_contract_pair(fn, acc, lab[i], keep);
        lab[i].t = NULL;
    }
    /* A "..." dimension of length 1 everywhere stays length 1: the output's shape is NumPy's. */
    result = wgt_narrow_cast_to(wgt_contract_finish(acc, out_nd, out_labels), result_type);
done:
    for (int i = 0; lab && i < count; i++) wgt_release(lab[i].t);
    for (int i = 0; widened && i < count; i++) wgt_release(wide[i]);
    free(lab);
    free(wide);
    return result;
}

wgt_status wgt_einsum_plan(const char *subscripts, int count, wgt_tensor *const *operands, wgt_contract_plan *p,
                           const char **why) {
    if (count > 2) {
        *why = "its gradient is planned for one or two operands (contract the others first)";
        return WGT_ERR_UNAVAILABLE;
    }
    wgt_labelled lab[2] = {{0}};
    int diagonal = 0;
    *p = (wgt_contract_plan){.nops = count};
    wgt_status st = parse_all(subscripts, count, operands, lab, p->out, &p->nout, &diagonal);
    for (int i = 0; i < count; i++) {
        if (lab[i].t) memcpy(p->labels[i], lab[i].labels, sizeof p->labels[i]);
        wgt_release(lab[i].t);
    }
    if (st == WGT_OK && diagonal) {
        *why = "an operand repeats a subscript (a diagonal)";
        return WGT_ERR_UNAVAILABLE;
    }
    return st;
}
