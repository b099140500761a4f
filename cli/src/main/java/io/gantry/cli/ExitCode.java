package io.gantry.cli;

/**
 * What {@code gantry} exits with, so scripts can tell outcomes apart. Documented in docs/user-guide.md; changing a
 * value breaks users' scripts.
 */
public final class ExitCode {
    /** Done; for {@code watch} and {@code submit --watch}: the job SUCCEEDED. */
    public static final int OK = 0;
    /** Something unexpected: the API answered 5xx (other than 503), or the CLI failed. */
    public static final int ERROR = 1;
    /** Bad command line, an invalid job file, or the API refused the input (400, 413, 414, 415, 422, 431). */
    public static final int INVALID = 2;
    /** No token, or the API refused it (401) or the caller may not do this (403). */
    public static final int AUTH = 3;
    /** No such job (or another tenant's), queue, node or log (404). */
    public static final int NOT_FOUND = 4;
    /** The request conflicts with the job's state, e.g. cancelling a finished job (409). */
    public static final int CONFLICT = 5;
    /** Gantry could not be reached or is not ready (connection refused, timeout, 503): retrying may help. */
    public static final int UNAVAILABLE = 6;
    /** {@code watch}: the job ended FAILED. */
    public static final int JOB_FAILED = 7;
    /** {@code watch}: the job ended CANCELLED. */
    public static final int JOB_CANCELLED = 8;
    /** {@code watch --timeout}: the job had not ended when the time was up. */
    public static final int TIMEOUT = 9;
    /** The tenant's or queue's money budget is exhausted and set to refuse new work (402). */
    public static final int BUDGET = 10;
    /** Refused for now (429): the tenant submits too fast, or has as many jobs open as it may. */
    public static final int LIMIT = 11;

    private ExitCode() {
    }

    /** The exit code for an HTTP status the API answered with. */
    public static int ofHttpStatus(int status) {
        return switch (status) {
            case 400, 413, 414, 415, 422, 431 -> INVALID;
            case 401, 403 -> AUTH;
            case 404 -> NOT_FOUND;
            case 402 -> BUDGET;
            case 429 -> LIMIT;
            case 409 -> CONFLICT;
            case 503 -> UNAVAILABLE;
            default -> ERROR;
        };
    }
}
