"""The pruned ranking kernel of :meth:`retrieval.postings.Postings.top`, compiled with numba.

Same algorithm and same floating-point operations as the numpy path (``Postings._top_pruned``):
rank-bm25's expression per (term, doc), summed in query order with repeats; docs are left out only
when an upper bound (with a safety margin) says they score below the ``need``-th best doc already
scored. One call per query, no numpy temporaries: what the numpy path spends in ~100 small array
operations is a few microseconds here. Importing numba costs ~0.4 s, so this module is imported only
by :func:`retrieval.postings.load_compiled` (a long-running process, in a background thread); the
numpy path answers until it is ready. Compiled code is cached on disk (``cache=True``).
"""

# numba types every argument from the arrays it is called with: annotations would only restate that.
# ruff: noqa: ANN001, ANN202

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@nb.njit(**_JIT)
def _contribution(variant: int, idf: float, k1: float, delta: float, tf: float, norm: float) -> float:
    # rank-bm25 0.2.2, operation for operation (see postings._contributions).
    if variant == 0:
        return idf * (tf * (k1 + 1) / (tf + norm))
    if variant == 1:
        ctd = tf / norm
        return idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
    return idf * (delta + (tf * (k1 + 1)) / (norm + tf))


@nb.njit(**_JIT)
def _popcount(x: np.uint64) -> int:
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@nb.njit(**_JIT)
def _tf_of(post_docs, post_tf, lo: int, hi: int, doc: int) -> float:
    # Binary search of doc in post_docs[lo:hi] (ascending).
    a, b = lo, hi
    while a < b:
        m = (a + b) >> 1
        if post_docs[m] < doc:
            a = m + 1
        else:
            b = m
    if a < hi and post_docs[a] == doc:
        return float(post_tf[a])
    return 0.0


@nb.njit(**_JIT)
def _insert(best_d, best_s, best_c, size: int, need: int, doc: int, score: float, count: int) -> int:
    # Keep best_* sorted: score desc, words matched desc, doc asc; return the new size.
    pos = size
    while pos > 0:
        s, c, d = best_s[pos - 1], best_c[pos - 1], best_d[pos - 1]
        if score > s or (score == s and (count > c or (count == c and doc < d))):
            pos -= 1
        else:
            break
    if pos >= need:
        return size
    end = size if size < need else need - 1
    for i in range(end, pos, -1):
        best_d[i], best_s[i], best_c[i] = best_d[i - 1], best_s[i - 1], best_c[i - 1]
    best_d[pos], best_s[pos], best_c[pos] = doc, score, count
    return size + 1 if size < need else size


#: Blocks scored first (best bounds) when the short terms gave no threshold.
SEED_BLOCKS = 8


@nb.njit(**_JIT)
def _advance(post_docs, post_tf, cur, end, r: int, doc: int) -> float:
    # Move cursor r to the first posting >= doc (galloping, then binary search); its tf or 0.
    p, hi = cur[r], end[r]
    if p < hi and post_docs[p] < doc:
        step = 1
        while p + step < hi and post_docs[p + step] < doc:
            step *= 2
        a, b = p + step // 2 + 1, min(p + step, hi)
        while a < b:
            m = (a + b) >> 1
            if post_docs[m] < doc:
                a = m + 1
            else:
                b = m
        p = a
        cur[r] = p
    if p < hi and post_docs[p] == doc:
        return float(post_tf[p])
    return 0.0


@nb.njit(**_JIT)
def _score_block(w, bits, flag, indptr, post_docs, post_tf, norm, idf, q_rows, d_tids, w_ptr, w_rows, variant,
                 k1, delta, tfs, best_d, best_s, best_c, size, need):  # fmt: skip
    while bits:
        low = bits & (~bits + np.uint64(1))
        b = _popcount(low - np.uint64(1))
        bits ^= low
        d = w * 64 + b
        if flag[d]:
            continue
        score, count = _exact(d, indptr, post_docs, post_tf, norm, idf, q_rows, d_tids, w_ptr, w_rows,
                              variant, k1, delta, tfs)  # fmt: skip
        size = _insert(best_d, best_s, best_c, size, need, d, score, count)
    return size


@nb.njit(**_JIT)
def _exact(doc, indptr, post_docs, post_tf, norm, idf, q_rows, d_tids, w_ptr, w_rows, variant, k1, delta,
           tfs):  # fmt: skip
    # rank-bm25's score of one doc (query order, repeats) and the number of query words it holds.
    nd = len(d_tids)
    for r in range(nd):
        t = d_tids[r]
        tfs[r] = _tf_of(post_docs, post_tf, indptr[t], indptr[t + 1], doc)
    return _sum(doc, norm, idf, q_rows, d_tids, w_ptr, w_rows, variant, k1, delta, tfs)


@nb.njit(**_JIT)
def _sum(doc, norm, idf, q_rows, d_tids, w_ptr, w_rows, variant, k1, delta, tfs):
    nrm = norm[doc]
    score = 0.0
    for q in range(len(q_rows)):
        r = q_rows[q]
        score += _contribution(variant, idf[d_tids[r]], k1, delta, tfs[r], nrm)
    count = 0
    for w in range(len(w_ptr) - 1):
        for j in range(w_ptr[w], w_ptr[w + 1]):
            if tfs[w_rows[j]] > 0:
                count += 1
                break
    return score, count


@nb.njit(**_JIT)
def top(
    indptr, post_docs, post_tf, norm, idf, baseline, long_slot, long_bits, long_bmax, long_min,
    q_rows, d_tids, d_mult, w_ptr, w_rows, mask, mask_words, need, variant, k1, delta, flag,
):  # fmt: skip
    """Top ``need`` docs, their scores and words matched, and the number of hits (see the module)."""
    n_words = long_bits.shape[1]
    nd = len(d_tids)
    has_mask = len(mask) > 0
    const = 0.0
    for r in range(nd):
        const += d_mult[r] * baseline[d_tids[r]]
    # Short terms: every doc is a candidate, with a partial score.
    n_short = 0
    for r in range(nd):
        t = d_tids[r]
        if long_slot[t] < 0:
            n_short += indptr[t + 1] - indptr[t]
    touched = np.empty(n_short, dtype=np.int64)
    partial = np.empty(n_short, dtype=np.float64)
    n_cand = 0
    # flag[d] holds 1 + the candidate's index while it is one (reset before returning).
    for r in range(nd):
        t = d_tids[r]
        if long_slot[t] >= 0:
            continue
        base = baseline[t]
        for j in range(indptr[t], indptr[t + 1]):
            d = post_docs[j]
            e = d_mult[r] * (_contribution(variant, idf[t], k1, delta, float(post_tf[j]), norm[d]) - base)
            at = flag[d]
            if at == 0:
                touched[n_cand] = d
                partial[n_cand] = e
                n_cand += 1
                flag[d] = n_cand
            else:
                partial[at - 1] += e
    # Long terms: block bounds, union bitmap, their least addition.
    block_ub = np.zeros(n_words, dtype=np.float64)
    union = np.zeros(n_words, dtype=np.uint64)
    lb_long = 0.0
    n_long = 0
    for r in range(nd):
        s = long_slot[d_tids[r]]
        if s < 0:
            continue
        n_long += 1
        m = d_mult[r]
        lb_long += m * min(long_min[s], 0.0)
        for w in range(n_words):
            block_ub[w] += m * long_bmax[s, w]
            union[w] |= long_bits[s, w]
    if has_mask:
        for w in range(n_words):
            union[w] &= mask_words[w]
    total = 0
    for w in range(n_words):
        total += _popcount(union[w])
    top_part = 0.0
    for i in range(n_cand):
        d = touched[i]
        if has_mask and not mask[d]:
            continue
        if n_long == 0 or not (union[d >> 6] >> np.uint64(d & 63)) & np.uint64(1):
            total += 1
        top_part = max(top_part, abs(partial[i]))
    best_d = np.zeros(max(need, 1), dtype=np.int64)
    best_s = np.zeros(max(need, 1), dtype=np.float64)
    best_c = np.zeros(max(need, 1), dtype=np.int32)
    size = 0
    if need > 0 and total > 0:
        ub_max = 0.0
        for w in range(n_words):
            ub_max = max(ub_max, block_ub[w])
        slack = 1e-7 * (1.0 + abs(const) + top_part + ub_max + abs(lb_long))
        # Threshold from the candidates' lower bounds.
        theta = -np.inf
        lows = np.empty(n_cand, dtype=np.float64)
        n_low = 0
        for i in range(n_cand):
            if has_mask and not mask[touched[i]]:
                continue
            lows[n_low] = partial[i] + (const + lb_long - slack)
            n_low += 1
        if n_low >= need:
            theta = np.partition(lows[:n_low], n_low - need)[n_low - need]
        tfs = np.zeros(nd, dtype=np.float64)
        for i in range(n_cand):
            d = touched[i]
            if has_mask and not mask[d]:
                continue
            up = partial[i] + (const + slack)
            if n_long:
                up += block_ub[d >> 6]
            if up < theta:
                continue
            score, count = _exact(d, indptr, post_docs, post_tf, norm, idf, q_rows, d_tids, w_ptr, w_rows,
                                  variant, k1, delta, tfs)  # fmt: skip
            size = _insert(best_d, best_s, best_c, size, need, d, score, count)
            if size >= need:
                theta = max(theta, best_s[need - 1])
        if n_long:
            if size >= need:
                theta = best_s[need - 1]
            bound = np.empty(n_words, dtype=np.float64)
            n_open = 0
            for w in range(n_words):
                bound[w] = block_ub[w] + (const + slack) if union[w] else -np.inf
                if bound[w] >= theta:
                    n_open += 1
            done = np.zeros(n_words, dtype=np.bool_)
            if size < need and n_open:
                # No threshold yet: score the most promising blocks first (binary searches).
                open_ = np.empty(n_open, dtype=np.int64)
                k = 0
                for w in range(n_words):
                    if bound[w] >= theta:
                        open_[k] = w
                        k += 1
                seeds = open_[np.argsort(-bound[open_])[:SEED_BLOCKS]]
                for w in seeds:
                    done[w] = True
                    size = _score_block(w, union[w], flag, indptr, post_docs, post_tf, norm, idf, q_rows,
                                        d_tids, w_ptr, w_rows, variant, k1, delta, tfs, best_d, best_s,
                                        best_c, size, need)  # fmt: skip
                if size >= need:
                    theta = best_s[need - 1]
            # Then every block that can still reach the threshold, in doc order: the posting lists are
            # walked forward (galloping), so a dense query costs about one pass over its postings.
            cur = np.empty(nd, dtype=np.int64)
            end = np.empty(nd, dtype=np.int64)
            slots = np.empty(nd, dtype=np.int64)
            for r in range(nd):
                slots[r] = long_slot[d_tids[r]]
                cur[r] = indptr[d_tids[r]]
                end[r] = indptr[d_tids[r] + 1]
            for w in range(n_words):
                if done[w] or bound[w] < theta:
                    continue
                bits = union[w]
                while bits:
                    low = bits & (~bits + np.uint64(1))
                    b = _popcount(low - np.uint64(1))
                    bits ^= low
                    d = w * 64 + b
                    if flag[d]:
                        continue  # a candidate: scored above, or bounded below the threshold
                    # This doc's own bound: the block maxima of the long terms it holds.
                    up = const + slack
                    for r in range(nd):
                        sr = slots[r]
                        if sr >= 0 and (long_bits[sr, w] >> np.uint64(b)) & np.uint64(1):
                            up += d_mult[r] * long_bmax[sr, w]
                    if up < theta:
                        continue
                    for r in range(nd):
                        tfs[r] = _advance(post_docs, post_tf, cur, end, r, d)
                    score, count = _sum(d, norm, idf, q_rows, d_tids, w_ptr, w_rows, variant, k1, delta, tfs)
                    size = _insert(best_d, best_s, best_c, size, need, d, score, count)
                    if size >= need:
                        theta = best_s[need - 1]
    for i in range(n_cand):
        flag[touched[i]] = 0
    return best_d[:size], best_s[:size], best_c[:size], total
