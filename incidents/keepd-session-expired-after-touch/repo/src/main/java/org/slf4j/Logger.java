package org.slf4j;

/**
 * Minimal subset of the SLF4J logging facade used by this project. Kept in-tree so the
 * module builds without fetching the real artifact.
 */
public interface Logger {
    String getName();

    boolean isTraceEnabled();

    boolean isDebugEnabled();

    void trace(String msg, Object... args);

    void debug(String msg, Object... args);

    void info(String msg, Object... args);

    void warn(String msg, Object... args);

    void error(String msg, Object... args);
}
