"""jaxbody._math.gather: static-index gathers and scatters equal jax.numpy indexing, under vmap and autodiff."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbody._math.gather import set_rows, take_rows

X = jnp.arange(60.0).reshape(5, 4, 3)
ROWS = [np.array([3, 0, 0]), np.array([[1, 2], [4, 4]]), np.array([], dtype=int), np.array(2)]


@pytest.mark.parametrize("rows", ROWS, ids=["repeated", "2d", "empty", "scalar"])
def test_take_rows_equals_fancy_indexing(rows):
    np.testing.assert_array_equal(take_rows(X, rows), X[rows])
    batch = jnp.stack([X, -2.0 * X])
    np.testing.assert_array_equal(jax.vmap(lambda x: take_rows(x, rows))(batch), batch[:, rows])


def test_take_rows_derivatives_accumulate_repeated_rows():
    rows = np.array([1, 1, 3])
    f = lambda x: jnp.sum(jnp.sin(take_rows(x, rows)))  # noqa: E731
    np.testing.assert_array_equal(jax.grad(f)(X), jax.grad(lambda x: jnp.sum(jnp.sin(x[rows])))(X))
    np.testing.assert_array_equal(jax.jacfwd(lambda x: take_rows(x, rows))(X), jax.jacfwd(lambda x: x[rows])(X))


def test_set_rows_equals_at_set():
    out, rows = jnp.zeros(7), np.array([[5, 0], [2, 6]])
    values = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(set_rows(out, rows, values), out.at[rows].set(values))
    g = jax.grad(lambda v: jnp.sum(jnp.arange(7.0) * set_rows(out, rows, v)))(values)
    np.testing.assert_array_equal(g, jnp.array([[5.0, 0.0], [2.0, 6.0]]))
    batch = jnp.stack([values, 2 * values])
    np.testing.assert_array_equal(jax.vmap(lambda v: set_rows(out, rows, v))(batch)[1], out.at[rows].set(2 * values))
