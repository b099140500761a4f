package io.gantry.runtime.http;

import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.json.JsonMapper;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The HTTP side of a service split into units ({@link UnitOwners}: placement by pool, the queue by cohort tree): a
 * request reaching any instance is answered over every unit. Reads add what the instances owning the other units
 * answer to the same request (marked forwarded, so they answer for their own units only); a command on something no
 * unit here has goes to those instances in turn until one has it; a request about one unit goes to its owner. Not
 * split, there is nothing to add (a standby forwards the whole request to the owner instead).
 */
public final class Units {
    private Units() {
    }

    /** Thrown when another instance's part cannot be had: the answer to give instead. */
    public static final class Unavailable extends Exception {
        private final transient HttpResponse<?> answer;

        Unavailable(HttpResponse<?> answer) {
            super("another instance's part is unavailable", null, false, false);
            this.answer = answer;
        }

        public HttpResponse<?> answer() {
            return answer;
        }
    }

    /**
     * The bodies the instances owning the other units answer to {@code request} (none when this request was itself
     * forwarded, or this instance owns every unit).
     */
    public static <T> List<T> others(UnitOwners units, HttpRequest<?> request, JsonMapper json, Argument<T> type)
            throws Unavailable {
        List<T> out = new ArrayList<>();
        for (String owner : owners(units, request)) {
            HttpResponse<?> answer = OwnerForwardingFilter.forward(request, owner, units.advertisedUrl(), new byte[0]);
            if (answer.getStatus() != HttpStatus.OK || !(answer.getBody().orElse(null) instanceof byte[] bytes)) {
                throw new Unavailable(answer);
            }
            try {
                out.add(json.readValue(bytes, type));
            } catch (IOException e) {
                throw new Unavailable(Problem.response(HttpStatus.BAD_GATEWAY, "Bad answer", "the instance at "
                        + owner + " answered what could not be read: " + e.getMessage(), List.of()));
            }
        }
        return out;
    }

    /**
     * A node's or job's command that no unit here could carry out (the local answer was 404): the answer of the
     * first instance owning another unit that has it, or empty (then the local 404 stands).
     */
    public static Optional<HttpResponse<?>> elsewhere(UnitOwners units, HttpRequest<?> request, byte[] body) {
        List<String> owners;
        try {
            owners = owners(units, request);
        } catch (Unavailable u) {
            return Optional.of(u.answer());
        }
        for (String owner : owners) {
            HttpResponse<?> answer = OwnerForwardingFilter.forward(request, owner, units.advertisedUrl(),
                    body == null ? new byte[0] : body);
            if (answer.getStatus() != HttpStatus.NOT_FOUND) {
                return Optional.of(answer);
            }
        }
        return Optional.empty();
    }

    /**
     * A request about unit {@code unit} (a simulated node's pool, a queue's shard) that another instance owns:
     * that instance's answer; empty when this instance owns the unit, the request was itself forwarded, or the
     * service is not split (then it is carried out here).
     */
    public static Optional<HttpResponse<?>> toOwnerOf(UnitOwners units, HttpRequest<?> request, String unit,
                                               byte[] body) {
        if (!units.split() || OwnerForwardingFilter.forwarded(request)) {
            return Optional.empty();
        }
        Optional<String> owner;
        try {
            owner = units.ownerOf(unit);
        } catch (IllegalStateException e) {
            return Optional.of(takeoverUnderWay(e));
        }
        return owner.map(url -> OwnerForwardingFilter.forward(request, url, units.advertisedUrl(),
                body == null ? new byte[0] : body));
    }

    /**
     * The instances owning the units this one does not, to add to or try for {@code request}; none when it was
     * itself forwarded or the service is not split.
     *
     * @throws Unavailable 503 with Retry-After while a unit has no owner (a takeover under way)
     */
    private static List<String> owners(UnitOwners units, HttpRequest<?> request) throws Unavailable {
        if (!units.split() || OwnerForwardingFilter.forwarded(request)) {
            return List.of();
        }
        try {
            return units.otherOwners();
        } catch (IllegalStateException e) {
            throw new Unavailable(takeoverUnderWay(e));
        }
    }

    /** 503 with Retry-After: a unit has no owner while another instance takes it over. */
    private static HttpResponse<?> takeoverUnderWay(IllegalStateException e) {
        return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", e.getMessage()
                + " (a takeover under way); retry shortly", List.of()).header("Retry-After", "2");
    }
}
