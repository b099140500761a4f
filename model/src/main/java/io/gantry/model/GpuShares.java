package io.gantry.model;

import java.math.BigDecimal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a task holds of GPUs, in thousandths of a GPU: the one unit in which quota, fair share, preemption,
 * placement and billing count. A whole GPU is {@value #WHOLE}; a fraction is its thousandths
 * ({@value #MIN_FRACTION}-{@value #MAX_FRACTION}); a MIG instance is its compute slices over the GPU's
 * {@value #MIG_COMPUTE_SLICES}, rounded down ({@code 3g.40gb}: 428; all seven slices: a whole GPU).
 *
 * <p>Every service reads the rule from here, so a share is charged to quota, placed and billed as the same amount.
 */
public final class GpuShares {
    /** Thousandths in one whole GPU. */
    public static final int WHOLE = 1000;
    /** The smallest fraction of one GPU a task may ask for. */
    public static final int MIN_FRACTION = 1;
    /** The largest fraction (a thousandth less than a whole GPU, which is asked for as {@code gpus: 1}). */
    public static final int MAX_FRACTION = 999;
    /** The compute slices of a MIG-capable GPU (NVIDIA A100/H100/H200/B200). */
    public static final int MIG_COMPUTE_SLICES = 7;
    /** NVIDIA's MIG profile names: compute slices, then memory, e.g. {@code 1g.10gb}, {@code 3g.40gb}. */
    public static final Pattern MIG_PROFILE = Pattern.compile("([1-7])g\\.[0-9]{1,3}gb");

    private static final BigDecimal THOUSAND = BigDecimal.valueOf(WHOLE);

    private GpuShares() {
    }

    /** Whether {@code milli} is a valid fraction of one GPU. */
    public static boolean isFraction(long milli) {
        return milli >= MIN_FRACTION && milli <= MAX_FRACTION;
    }

    /** What a MIG instance of {@code computeSlices} holds: slices over 7, rounded down; all 7 are a whole GPU. */
    public static int migMilli(int computeSlices) {
        if (computeSlices < 1 || computeSlices > MIG_COMPUTE_SLICES) {
            throw new IllegalArgumentException("MIG compute slices must be 1-7, was " + computeSlices);
        }
        return computeSlices == MIG_COMPUTE_SLICES ? WHOLE : computeSlices * WHOLE / MIG_COMPUTE_SLICES;
    }

    /** Whether {@code profile} is an NVIDIA MIG profile name ({@code <slices>g.<memory>gb}). */
    public static boolean isMigProfile(String profile) {
        return profile != null && MIG_PROFILE.matcher(profile).matches();
    }

    /** What an instance of the named MIG profile holds (its compute slices are the name's leading digit). */
    public static int migMilli(String profile) {
        Matcher m = profile == null ? null : MIG_PROFILE.matcher(profile);
        if (m == null || !m.matches()) {
            throw new IllegalArgumentException("MIG profile must be named <slices>g.<memory>gb (e.g. 3g.40gb), was "
                    + profile);
        }
        return migMilli(Integer.parseInt(m.group(1)));
    }

    /**
     * What one task holds: {@code gpus} whole GPUs, or (with {@code gpus} = 0) a fraction of {@code fractionMilli}
     * or an instance of {@code migProfile}; 0 for a task without GPUs.
     */
    public static long perTask(int gpus, Integer fractionMilli, String migProfile) {
        if (gpus < 0) {
            throw new IllegalArgumentException("gpus must be >= 0, was " + gpus);
        }
        if (fractionMilli != null && migProfile != null) {
            throw new IllegalArgumentException("a task holds a fraction or a MIG instance, not both");
        }
        if ((fractionMilli != null || migProfile != null) && gpus != 0) {
            throw new IllegalArgumentException("a fraction or MIG instance needs gpus = 0, was " + gpus);
        }
        if (fractionMilli != null) {
            if (!isFraction(fractionMilli)) {
                throw new IllegalArgumentException("gpuMilli must be " + MIN_FRACTION + "-" + MAX_FRACTION
                        + ", was " + fractionMilli);
            }
            return fractionMilli;
        }
        if (migProfile != null) {
            return migMilli(migProfile);
        }
        return (long) gpus * WHOLE;
    }

    /** What a task placed on {@code wholeGpus} whole devices plus shares of {@code sharesMilli} holds. */
    public static long held(int wholeGpus, long sharesMilli) {
        if (wholeGpus < 0 || sharesMilli < 0) {
            throw new IllegalArgumentException("whole GPUs and shares must be >= 0");
        }
        return Math.addExact(Math.multiplyExact((long) wholeGpus, WHOLE), sharesMilli);
    }

    /** Thousandths as GPUs for people: {@code 2000} is "2", {@code 2500} "2.5", {@code 125} "0.125". */
    public static String format(long milli) {
        return BigDecimal.valueOf(milli, 3).stripTrailingZeros().toPlainString();
    }

    /** Thousandths as a number of GPUs (exact: three decimals at most), e.g. for JSON. */
    public static BigDecimal toGpus(long milli) {
        BigDecimal gpus = BigDecimal.valueOf(milli, 3).stripTrailingZeros();
        return gpus.scale() < 0 ? gpus.setScale(0) : gpus;
    }

    /**
     * GPUs written by people (a whole number or a decimal with at most three places, e.g. {@code 12.5}) in
     * thousandths. Refuses more precision than a thousandth rather than rounding a quota silently.
     */
    public static long fromGpus(BigDecimal gpus) {
        BigDecimal milli = gpus.multiply(THOUSAND);
        try {
            return milli.stripTrailingZeros().scale() > 0 ? fail(gpus) : milli.longValueExact();
        } catch (ArithmeticException e) {
            return fail(gpus);
        }
    }

    private static long fail(BigDecimal gpus) {
        throw new IllegalArgumentException("GPUs are counted in thousandths: at most three decimal places, was "
                + gpus.toPlainString());
    }
}
