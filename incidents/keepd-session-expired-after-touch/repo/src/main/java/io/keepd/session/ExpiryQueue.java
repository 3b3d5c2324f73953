package io.keepd.session;

import io.keepd.util.Clock;

import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Groups elements into expiry buckets that are {@code expirationInterval} milliseconds wide,
 * so that the tracker only wakes up once per interval instead of once per element.
 */
public final class ExpiryQueue<E> {
    private final ConcurrentHashMap<E, Long> elemMap = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Set<E>> expiryMap = new ConcurrentHashMap<>();
    private final AtomicLong nextExpirationTime = new AtomicLong();
    private final int expirationInterval;
    private final Clock clock;

    public ExpiryQueue(int expirationInterval, Clock clock) {
        this.expirationInterval = expirationInterval;
        this.clock = clock;
        nextExpirationTime.set(roundToNextInterval(clock.nowMillis()));
    }

    private long roundToNextInterval(long time) {
        return (time / expirationInterval + 1) * expirationInterval;
    }

    /**
     * Moves {@code elem} into the bucket that expires {@code timeout} ms from now.
     *
     * @return the new bucket time, or null if the element stayed in its bucket
     */
    public Long update(E elem, int timeout) {
        Long prevExpiryTime = elemMap.get(elem);
        long now = clock.nowMillis();
        Long newExpiryTime = roundToNextInterval(now + timeout);
        if (newExpiryTime.equals(prevExpiryTime)) {
            return null;
        }
        Set<E> set = expiryMap.computeIfAbsent(newExpiryTime, k -> ConcurrentHashMap.newKeySet());
        set.add(elem);
        prevExpiryTime = elemMap.put(elem, newExpiryTime);
        if (prevExpiryTime != null && !newExpiryTime.equals(prevExpiryTime)) {
            Set<E> prevSet = expiryMap.get(prevExpiryTime);
            if (prevSet != null) {
                prevSet.remove(elem);
            }
        }
        return newExpiryTime;
    }

    /** Removes the element from whichever bucket holds it. */
    public Long remove(E elem) {
        Long expiryTime = elemMap.remove(elem);
        if (expiryTime != null) {
            Set<E> set = expiryMap.get(expiryTime);
            if (set != null) {
                set.remove(elem);
            }
        }
        return expiryTime;
    }

    /** Milliseconds until the next bucket is due; zero or negative when it is due now. */
    public long getWaitTime() {
        long now = clock.nowMillis();
        long expirationTime = nextExpirationTime.get();
        return now < expirationTime ? (expirationTime - now) : 0L;
    }

    /**
     * Removes and returns the bucket that is due, if any. Only one caller wins a given bucket.
     */
    public Set<E> poll() {
        long now = clock.nowMillis();
        long expirationTime = nextExpirationTime.get();
        if (now < expirationTime) {
            return Collections.emptySet();
        }
        Set<E> set = null;
        long newExpirationTime = expirationTime + expirationInterval;
        if (nextExpirationTime.compareAndSet(expirationTime, newExpirationTime)) {
            set = expiryMap.remove(expirationTime);
        }
        return set == null ? Collections.emptySet() : set;
    }

    public int size() {
        return elemMap.size();
    }

    public long nextExpirationTime() {
        return nextExpirationTime.get();
    }
}
