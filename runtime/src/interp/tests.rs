//! Interpreter tests: see ../../tests.
