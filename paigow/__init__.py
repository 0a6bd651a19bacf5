"""The game of Pai Gow (tiles) as pure Python: tiles, hands, house ways, dice, settlement.

No third-party imports: this package is the rules engine everything else stands on.
"""
