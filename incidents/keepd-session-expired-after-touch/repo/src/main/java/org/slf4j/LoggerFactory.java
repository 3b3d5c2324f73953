package org.slf4j;

import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/** Stand-in for the SLF4J binding: formats "{}" placeholders and writes to stderr. */
public final class LoggerFactory {
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss,SSS");

    private LoggerFactory() {
    }

    public static Logger getLogger(Class<?> type) {
        return new SimpleLogger(type.getName());
    }

    private static final class SimpleLogger implements Logger {
        private final String name;

        SimpleLogger(String name) {
            this.name = name;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return Boolean.getBoolean("log.debug");
        }

        @Override
        public void trace(String msg, Object... args) {
        }

        @Override
        public void debug(String msg, Object... args) {
            if (isDebugEnabled()) {
                log("DEBUG", msg, args);
            }
        }

        @Override
        public void info(String msg, Object... args) {
            log("INFO ", msg, args);
        }

        @Override
        public void warn(String msg, Object... args) {
            log("WARN ", msg, args);
        }

        @Override
        public void error(String msg, Object... args) {
            log("ERROR", msg, args);
        }

        private void log(String level, String msg, Object... args) {
            StringBuilder sb = new StringBuilder();
            int argIdx = 0;
            int i = 0;
            while (i < msg.length()) {
                if (i + 1 < msg.length() && msg.charAt(i) == '{' && msg.charAt(i + 1) == '}' && argIdx < args.length) {
                    sb.append(args[argIdx++]);
                    i += 2;
                } else {
                    sb.append(msg.charAt(i++));
                }
            }
            System.err.printf("%s [%s] %s %s - %s%n", LocalDateTime.now().format(TS),
                    Thread.currentThread().getName(), level, name, sb);
            if (argIdx < args.length && args[args.length - 1] instanceof Throwable) {
                ((Throwable) args[args.length - 1]).printStackTrace();
            }
        }
    }
}
