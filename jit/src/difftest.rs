//! placeholder (differential tester, being written)
