// Package zap is a minimal, dependency-free subset of go.uber.org/zap's API.
// It exists so that the server can be built in air-gapped environments; the
// console output mirrors zap's production console encoder.
package zap

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type Level int8

const (
	DebugLevel Level = iota - 1
	InfoLevel
	WarnLevel
	ErrorLevel
	PanicLevel
)

func (l Level) String() string {
	switch l {
	case DebugLevel:
		return "DEBUG"
	case InfoLevel:
		return "INFO"
	case WarnLevel:
		return "WARN"
	case ErrorLevel:
		return "ERROR"
	case PanicLevel:
		return "PANIC"
	}
	return "LEVEL(" + strconv.Itoa(int(l)) + ")"
}

// Field is a single structured key/value pair.
type Field struct {
	Key   string
	value string
}

func String(k, v string) Field            { return Field{k, strconv.Quote(v)} }
func Uint64(k string, v uint64) Field     { return Field{k, strconv.FormatUint(v, 10)} }
func Int(k string, v int) Field           { return Field{k, strconv.Itoa(v)} }
func Int64(k string, v int64) Field       { return Field{k, strconv.FormatInt(v, 10)} }
func Bool(k string, v bool) Field         { return Field{k, strconv.FormatBool(v)} }
func Duration(k string, d time.Duration) Field { return Field{k, strconv.Quote(d.String())} }
func Strings(k string, v []string) Field {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = strconv.Quote(s)
	}
	return Field{k, "[" + strings.Join(q, ", ") + "]"}
}
func Error(err error) Field {
	if err == nil {
		return Field{"error", "null"}
	}
	return Field{"error", strconv.Quote(err.Error())}
}
func Any(k string, v interface{}) Field { return Field{k, strconv.Quote(fmt.Sprint(v))} }

// Logger writes structured, leveled log lines.
type Logger struct {
	mu     *sync.Mutex
	out    io.Writer
	name   string
	level  Level
	fields []Field
}

// NewProduction returns a logger writing INFO and above to stderr.
func NewProduction() *Logger {
	return &Logger{mu: &sync.Mutex{}, out: os.Stderr, level: InfoLevel}
}

// NewNop returns a logger that discards everything.
func NewNop() *Logger {
	return &Logger{mu: &sync.Mutex{}, out: io.Discard, level: PanicLevel + 1}
}

func (l *Logger) clone() *Logger {
	c := *l
	c.fields = append([]Field(nil), l.fields...)
	return &c
}

// Named adds a sub-scope to the logger's name.
func (l *Logger) Named(s string) *Logger {
	c := l.clone()
	if c.name == "" {
		c.name = s
	} else {
		c.name = c.name + "." + s
	}
	return c
}

// With adds fields to every subsequent entry.
func (l *Logger) With(fields ...Field) *Logger {
	c := l.clone()
	c.fields = append(c.fields, fields...)
	return c
}

func (l *Logger) Debug(msg string, fields ...Field) { l.write(DebugLevel, msg, fields) }
func (l *Logger) Info(msg string, fields ...Field)  { l.write(InfoLevel, msg, fields) }
func (l *Logger) Warn(msg string, fields ...Field)  { l.write(WarnLevel, msg, fields) }
func (l *Logger) Error(msg string, fields ...Field) { l.write(ErrorLevel, msg, fields) }

// Panic logs the message and then panics.
func (l *Logger) Panic(msg string, fields ...Field) {
	l.write(PanicLevel, msg, fields)
	panic(msg)
}

func (l *Logger) write(lvl Level, msg string, fields []Field) {
	if lvl < l.level {
		return
	}
	var b strings.Builder
	b.WriteString(time.Now().UTC().Format("2006-01-02T15:04:05.000Z0700"))
	b.WriteByte('\t')
	b.WriteString(lvl.String())
	if l.name != "" {
		b.WriteByte('\t')
		b.WriteString(l.name)
	}
	b.WriteByte('\t')
	b.WriteString(msg)
	all := append(append([]Field(nil), l.fields...), fields...)
	if len(all) > 0 {
		b.WriteString("\t{")
		for i, f := range all {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(f.Key))
			b.WriteString(": ")
			b.WriteString(f.value)
		}
		b.WriteByte('}')
	}
	b.WriteByte('\n')
	l.mu.Lock()
	io.WriteString(l.out, b.String())
	l.mu.Unlock()
}
