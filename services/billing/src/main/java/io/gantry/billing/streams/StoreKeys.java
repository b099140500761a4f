package io.gantry.billing.streams;

import java.time.YearMonth;

/**
 * Keys of the month-to-date stores, month first so a month (or a tenant in a month) is one prefix scan and the
 * oldest months come first for expiry. Parts are separated by NUL, which no tenant id ({@code Ids.RULE}), entry id
 * or GPU model contains; a CPU-only entry's model is the empty string.
 */
final class StoreKeys {
    static final char SEP = '\u0000';

    private StoreKeys() {
    }

    /** {@code month NUL tenant NUL model}: the totals of a tenant on a GPU model in a month. */
    static String totals(YearMonth month, String tenant, String gpuModel) {
        return month.toString() + SEP + tenant + SEP + (gpuModel == null ? "" : gpuModel);
    }

    static String monthPrefix(YearMonth month) {
        return month.toString() + SEP;
    }

    static String tenantPrefix(YearMonth month, String tenant) {
        return month.toString() + SEP + tenant + SEP;
    }

    /** {@code month NUL entryId}: an entry seen, in the month it ends. */
    static String seen(YearMonth month, String entryId) {
        return month.toString() + SEP + entryId;
    }

    static YearMonth month(String key) {
        return YearMonth.parse(key.substring(0, key.indexOf(SEP)));
    }

    /** The tenant and model of a totals key ({@code null} model for CPU-only). */
    static String[] tenantAndModel(String totalsKey) {
        int first = totalsKey.indexOf(SEP);
        int second = totalsKey.indexOf(SEP, first + 1);
        String model = totalsKey.substring(second + 1);
        return new String[]{totalsKey.substring(first + 1, second), model.isEmpty() ? null : model};
    }
}
