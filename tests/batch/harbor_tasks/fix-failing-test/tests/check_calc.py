"""The unit test of the task (test.sh runs it with /app on the path)."""

import unittest

import calc


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)
