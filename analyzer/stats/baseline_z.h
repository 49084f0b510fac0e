// The z of a run against a baseline estimated from a few runs (issue 18 item
// 4: false findings on a healthy history). A run x is compared with the
// median m of the n runs before it, in units of a noise sigma-hat that is
// itself estimated; thresholds on (x - m) / sigma-hat assume normal tails.
//  - sigma-hat: an estimate with few effective degrees of freedom (a median
//    of absolute differences has about 0.4 of the standard deviation's per
//    value), so (x - m) / sigma-hat is heavy-tailed like Student's t: early
//    in a series a "z 3.5" is far likelier than 0.02%. NormalEquivalentZ maps
//    it to the normal z of the same tail, so thresholds keep their meaning.
//  - m: var(m) ~ sigma^2 pi / (2n). Two runs compared with the same m are
//    correlated, rho = v / (1 + v) with v = pi / (2n) (0.10 at n = 14), so
//    two high z's in a row are likelier than the product of their tails:
//    PairZ maps them to the z two independent runs would each need.
// Pure.
#pragma once

namespace fabtrack::stats {

// pi / (2n): the variance of the median of n normal values, in units of one
// value's variance (asymptotic; slightly above the exact small-n figure).
double MedianVarianceFactor(int n);

// The normal z with P(Z >= z) = P(T >= t) for Student's t with `dof` degrees
// of freedom (same sign as t; |z| <= |t|). dof <= 0 or infinite: t.
double NormalEquivalentZ(double t, double dof);

// P(Z1 >= z, Z2 >= z) for standard normals with correlation rho in [0, 1).
double PairUpperTail(double z, double rho);

// Two runs with (normal) z's z1, z2 against the same median of
// `baseline_runs` runs: the z that each of two independent runs would need
// to reach for the same joint tail P(both >= min(z1, z2)). min(z1, z2) when
// it is <= 0; never above it.
double PairZ(double z1, double z2, int baseline_runs);

}  // namespace fabtrack::stats
