package io.gantry.placement;

import io.micronaut.core.convert.ArgumentConversionContext;
import io.micronaut.core.naming.conventions.StringConvention;
import io.micronaut.core.value.PropertyResolver;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One pool's view of placement's configuration: {@code gantry.placement.<key>} reads
 * {@code gantry.placement.pools.<pool>.<key>} when set, else the key itself. So the backend code reads the keys it
 * always read, and a site sets what all pools share once and what differs per pool.
 */
final class PoolProperties implements PropertyResolver {
    private static final String PREFIX = "gantry.placement.";
    private final PropertyResolver env;
    private final String pool;

    PoolProperties(PropertyResolver env, String pool) {
        this.env = env;
        this.pool = pool;
    }

    /** The pool's own name for {@code name}, or null when it is no placement key (or already a pool's). */
    private String own(String name) {
        if (!name.startsWith(PREFIX) || name.startsWith(BackendFactory.POOLS + ".")) {
            return null;
        }
        return BackendFactory.POOLS + "." + pool + "." + name.substring(PREFIX.length());
    }

    @Override
    public boolean containsProperty(String name) {
        String own = own(name);
        return own != null && env.containsProperty(own) || env.containsProperty(name);
    }

    @Override
    public boolean containsProperties(String name) {
        String own = own(name);
        return own != null && env.containsProperties(own) || env.containsProperties(name);
    }

    @Override
    public <T> Optional<T> getProperty(String name, ArgumentConversionContext<T> conversionContext) {
        String own = own(name);
        if (own != null && env.containsProperty(own)) {
            return env.getProperty(own, conversionContext);
        }
        return env.getProperty(name, conversionContext);
    }

    @Override
    public Collection<List<String>> getPropertyPathMatches(String pathPattern) {
        return env.getPropertyPathMatches(pathPattern);
    }

    @Override
    public Collection<String> getPropertyEntries(String name) {
        String own = own(name);
        return own != null && env.containsProperties(own) ? env.getPropertyEntries(own) : env.getPropertyEntries(name);
    }

    /** A map-valued key (e.g. {@code gantry.placement.mig}) is the pool's whole when it has one, else the shared one. */
    @Override
    public Map<String, Object> getProperties(String name, StringConvention keyFormat) {
        String own = own(name);
        return own != null && env.containsProperties(own) ? env.getProperties(own, keyFormat)
                : env.getProperties(name, keyFormat);
    }
}
